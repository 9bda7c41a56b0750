package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.EigenDecomposition;

/**
 * GEM-RAG's eigen-themes (§III-B): the passages of a namespace as a complete graph whose edge weight s_ij sums the
 * similarities of passage i's utility questions to passage j's text, the normalized Laplacian variant L = D^-1/2 (S −
 * diag S) D^-1/2, and its leading eigenvectors as themes, each represented by its top components.
 *
 * <p>Never materializes S: with unit vectors, s_ij = U_i · v_j where U_i is the sum of i's question vectors, so S = U
 * Vᵀ has rank at most the embedding dimension and a product S·x costs O(n·d). The graph is made symmetric as (S + Sᵀ)
 * / 2. The leading eigenpairs come from block power iteration with Rayleigh–Ritz on the shifted operator (L + I) / 2,
 * whose spectrum lies in [0, 1] with the same eigenvectors, so the eigenvalues largest in value lead (λ₁ = 1).
 */
public final class EigenThemes {

    /** One theme: its eigenvalue and the passages (indices) with the largest components, strongest first. */
    public record Theme(double eigenvalue, int[] members, double[] weights) {}

    /** Themes, and the number of essential themes by the eigen-gap rule of the paper's Remark 2. */
    public record Result(List<Theme> themes, int essential) {}

    private static final int ITERATIONS = 60;

    private EigenThemes() {}

    /**
     * @param passages unit passage vectors (n × d)
     * @param questionSums for each passage, the sum of its unit utility-question vectors (or null when it has none)
     * @param count number of themes to return
     * @param top components (passages) per theme
     * @param gap the eigen-gap cutoff c of Remark 2
     */
    public static Result compute(float[][] passages, float[][] questionSums, int count, int top, double gap) {
        int n = passages.length;
        if (n < 3 || count < 1) {
            return new Result(List.of(), 0);
        }
        int d = passages[0].length;
        double[][] u = new double[n][d];
        for (int i = 0; i < n; i++) {
            if (questionSums[i] != null) {
                for (int k = 0; k < d; k++) {
                    u[i][k] = questionSums[i][k];
                }
            }
        }
        // diagonal of the symmetric S and degrees without self-loops, clamped positive
        double[] diag = new double[n];
        double[] sumV = new double[d];
        double[] sumU = new double[d];
        for (int i = 0; i < n; i++) {
            diag[i] = dot(u[i], passages[i]);
            for (int k = 0; k < d; k++) {
                sumV[k] += passages[i][k];
                sumU[k] += u[i][k];
            }
        }
        double[] invSqrtDegree = new double[n];
        int connected = 0;
        for (int i = 0; i < n; i++) {
            double row = (dot(u[i], sumV) + dotF(passages[i], sumU)) / 2 - diag[i];
            invSqrtDegree[i] = row > 1e-9 ? 1 / Math.sqrt(row) : 0;
            connected += row > 1e-9 ? 1 : 0;
        }
        if (connected < 3) {
            return new Result(List.of(), 0); // no utility questions: no graph to decompose
        }
        int block = Math.min(n, count + 3);
        double[][] x = new double[block][n];
        Random random = new Random(7);
        for (double[] col : x) {
            for (int i = 0; i < n; i++) {
                col[i] = random.nextGaussian();
            }
        }
        orthonormalize(x);
        double[] values = new double[block];
        for (int it = 0; it < ITERATIONS; it++) {
            double[][] y = new double[block][];
            for (int c = 0; c < block; c++) {
                y[c] = shifted(x[c], passages, u, diag, invSqrtDegree);
            }
            // Rayleigh–Ritz in span(y): small symmetric eigenproblem
            orthonormalize(y);
            double[][] h = new double[block][block];
            double[][] ay = new double[block][];
            for (int c = 0; c < block; c++) {
                ay[c] = shifted(y[c], passages, u, diag, invSqrtDegree);
            }
            for (int a = 0; a < block; a++) {
                for (int b = a; b < block; b++) {
                    // symmetric by construction, so the small problem is solved as the symmetric one it is
                    h[a][b] = (dot(y[a], ay[b]) + dot(y[b], ay[a])) / 2;
                    h[b][a] = h[a][b];
                }
            }
            double[][] vectors = new double[block][block];
            symmetricEigen(h, values, vectors);
            for (int c = 0; c < block; c++) {
                double[] col = new double[n];
                for (int b = 0; b < block; b++) {
                    double w = vectors[b][c];
                    for (int i = 0; i < n; i++) {
                        col[i] += w * y[b][i];
                    }
                }
                x[c] = col;
            }
        }
        List<Theme> themes = new ArrayList<>();
        for (int c = 0; c < Math.min(count, block); c++) {
            double[] v = x[c];
            // orient so that the largest component is positive
            int arg = 0;
            for (int i = 1; i < n; i++) {
                if (Math.abs(v[i]) > Math.abs(v[arg])) {
                    arg = i;
                }
            }
            double sign = v[arg] < 0 ? -1 : 1;
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (p, q) -> Double.compare(sign * v[q], sign * v[p]));
            int m = Math.min(top, n);
            int[] members = new int[m];
            double[] weights = new double[m];
            for (int i = 0; i < m; i++) {
                members[i] = order[i];
                weights[i] = sign * v[order[i]];
            }
            themes.add(new Theme(2 * values[c] - 1, members, weights));
        }
        return new Result(themes, essential(values, gap));
    }

    /** Remark 2: the first d ≥ 2 where the ratio λ_d/λ₁ drops to the next by more than the cutoff. */
    static int essential(double[] shiftedValues, double gap) {
        double first = 2 * shiftedValues[0] - 1;
        if (first <= 0) {
            return 1;
        }
        for (int k = 1; k + 1 < shiftedValues.length; k++) {
            double a = (2 * shiftedValues[k] - 1) / first;
            double b = (2 * shiftedValues[k + 1] - 1) / first;
            if (a - b > gap) {
                return k + 1;
            }
        }
        return 1;
    }

    /** (L + I) / 2 · x with L = D^-1/2 (S_sym − diag) D^-1/2 and S_sym = (U Vᵀ + V Uᵀ) / 2. */
    private static double[] shifted(double[] x, float[][] v, double[][] u, double[] diag, double[] invSqrtDegree) {
        int n = x.length;
        int d = u[0].length;
        double[] z = new double[n];
        for (int i = 0; i < n; i++) {
            z[i] = x[i] * invSqrtDegree[i];
        }
        double[] vtz = new double[d];
        double[] utz = new double[d];
        for (int i = 0; i < n; i++) {
            if (z[i] == 0) {
                continue;
            }
            for (int k = 0; k < d; k++) {
                vtz[k] += v[i][k] * z[i];
                utz[k] += u[i][k] * z[i];
            }
        }
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            double s = (dot(u[i], vtz) + dotF(v[i], utz)) / 2 - diag[i] * z[i];
            out[i] = (s * invSqrtDegree[i] + x[i]) / 2;
        }
        return out;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    private static double dot(double[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    private static double dotF(float[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    /** Modified Gram–Schmidt over the columns. */
    private static void orthonormalize(double[][] cols) {
        for (int c = 0; c < cols.length; c++) {
            for (int p = 0; p < c; p++) {
                double proj = dot(cols[c], cols[p]);
                for (int i = 0; i < cols[c].length; i++) {
                    cols[c][i] -= proj * cols[p][i];
                }
            }
            double norm = Math.sqrt(dot(cols[c], cols[c]));
            if (norm < 1e-12) {
                Arrays.fill(cols[c], 0);
                cols[c][c % cols[c].length] = 1; // degenerate: restart this direction
                norm = 1;
            }
            for (int i = 0; i < cols[c].length; i++) {
                cols[c][i] /= norm;
            }
        }
    }

    /** Eigenpairs of a small symmetric matrix; eigenvalues descending, eigenvectors as columns of {@code vec}. */
    static void symmetricEigen(double[][] a, double[] values, double[][] vec) {
        EigenDecomposition e = new EigenDecomposition(new Array2DRowRealMatrix(a, false));
        double[] raw = e.getRealEigenvalues();
        Integer[] order = new Integer[raw.length];
        for (int i = 0; i < raw.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Double.compare(raw[y], raw[x]));
        for (int c = 0; c < raw.length; c++) {
            values[c] = raw[order[c]];
            double[] v = e.getEigenvector(order[c]).toArray();
            for (int k = 0; k < v.length; k++) {
                vec[k][c] = v[k];
            }
        }
    }
}
