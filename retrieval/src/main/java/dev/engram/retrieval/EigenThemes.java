package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.EigenDecomposition;
import org.apache.lucene.util.VectorUtil;

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

    /** At most this many subspace iterations. */
    static final int MAX_ITERATIONS = 60;
    /** Ritz pairs count as converged when every returned one has a residual ‖Ax − λx‖ below this (the products are in float). */
    static final double TOLERANCE = 1e-6;

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
        Operator a = Operator.of(passages, questionSums);
        if (a == null) {
            return new Result(List.of(), 0); // no utility questions: no graph to decompose
        }
        int block = Math.min(n, count + 3);
        int wanted = Math.min(count, block);
        double[][] x = new double[block][n];
        Random random = new Random(7);
        for (double[] col : x) {
            for (int i = 0; i < n; i++) {
                col[i] = random.nextGaussian();
            }
        }
        orthonormalize(x);
        double[][] ax = a.apply(x);
        double[] values = new double[block];
        // Subspace iteration with Rayleigh–Ritz, one application of the operator per round: Y = orth(A X), then the
        // Ritz vectors X = Y W of Yᵀ A Y = W Λ Wᵀ, whose images A X = (A Y) W need no further application.
        for (int it = 0; it < MAX_ITERATIONS; it++) {
            double[][] y = ax;
            orthonormalize(y);
            double[][] ay = a.apply(y);
            double[][] h = new double[block][block];
            for (int p = 0; p < block; p++) {
                for (int q = p; q < block; q++) {
                    // symmetric by construction, so the small problem is solved as the symmetric one it is
                    h[p][q] = (dot(y[p], ay[q]) + dot(y[q], ay[p])) / 2;
                    h[q][p] = h[p][q];
                }
            }
            double[][] w = new double[block][block];
            symmetricEigen(h, values, w);
            x = combine(y, w);
            ax = combine(ay, w);
            if (residual(x, ax, values, wanted) < TOLERANCE) {
                break;
            }
        }
        List<Theme> themes = new ArrayList<>();
        for (int c = 0; c < wanted; c++) {
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

    /** The columns {@code Σ_b basis[b] · w[b][c]}. */
    private static double[][] combine(double[][] basis, double[][] w) {
        int block = basis.length;
        int n = basis[0].length;
        double[][] out = new double[block][n];
        for (int c = 0; c < block; c++) {
            double[] col = out[c];
            for (int b = 0; b < block; b++) {
                double f = w[b][c];
                double[] src = basis[b];
                for (int i = 0; i < n; i++) {
                    col[i] += f * src[i];
                }
            }
        }
        return out;
    }

    /** The largest residual ‖A x_c − λ_c x_c‖ of the first {@code wanted} Ritz pairs. */
    private static double residual(double[][] x, double[][] ax, double[] values, int wanted) {
        double worst = 0;
        for (int c = 0; c < wanted; c++) {
            double s = 0;
            for (int i = 0; i < x[c].length; i++) {
                double r = ax[c][i] - values[c] * x[c][i];
                s += r * r;
            }
            worst = Math.max(worst, Math.sqrt(s));
        }
        return worst;
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

    /**
     * The shifted operator (L + I) / 2 with L = D^-1/2 (S_sym − diag S) D^-1/2 and S_sym = (U Vᵀ + V Uᵀ) / 2, applied
     * to a block of columns at once: one pass over the passage and question vectors per product, whatever the block's
     * width. The d-dimensional products are in float, with Lucene's SIMD dot product.
     */
    private record Operator(int n, int d, float[][] v, float[][] u, double[] diag, double[] invSqrtDegree) {

        /** The operator of the passages' graph, or null when fewer than three passages have an edge. */
        static Operator of(float[][] passages, float[][] questionSums) {
            int n = passages.length;
            int d = passages[0].length;
            float[] none = new float[d];
            float[][] u = new float[n][];
            for (int i = 0; i < n; i++) {
                u[i] = questionSums[i] == null ? none : questionSums[i];
            }
            // diagonal of the symmetric S and degrees without self-loops, clamped positive
            double[] diag = new double[n];
            double[] sumV = new double[d];
            double[] sumU = new double[d];
            for (int i = 0; i < n; i++) {
                diag[i] = VectorUtil.dotProduct(u[i], passages[i]);
                for (int k = 0; k < d; k++) {
                    sumV[k] += passages[i][k];
                    sumU[k] += u[i][k];
                }
            }
            float[] totalV = toFloat(sumV);
            float[] totalU = toFloat(sumU);
            double[] invSqrtDegree = new double[n];
            int connected = 0;
            for (int i = 0; i < n; i++) {
                double degree =
                        ((double) VectorUtil.dotProduct(u[i], totalV) + VectorUtil.dotProduct(passages[i], totalU)) / 2
                                - diag[i];
                invSqrtDegree[i] = degree > 1e-9 ? 1 / Math.sqrt(degree) : 0;
                connected += degree > 1e-9 ? 1 : 0;
            }
            return connected < 3 ? null : new Operator(n, d, passages, u, diag, invSqrtDegree);
        }

        double[][] apply(double[][] x) {
            int block = x.length;
            double[][] z = new double[block][n];
            for (int c = 0; c < block; c++) {
                for (int i = 0; i < n; i++) {
                    z[c][i] = x[c][i] * invSqrtDegree[i];
                }
            }
            // Vᵀ Z and Uᵀ Z, d × block, as block rows of d
            float[][] vtz = new float[block][d];
            float[][] utz = new float[block][d];
            for (int i = 0; i < n; i++) {
                if (invSqrtDegree[i] == 0) {
                    continue;
                }
                float[] vi = v[i];
                float[] ui = u[i];
                for (int c = 0; c < block; c++) {
                    float zi = (float) z[c][i];
                    float[] pv = vtz[c];
                    float[] pu = utz[c];
                    for (int k = 0; k < d; k++) {
                        pv[k] += vi[k] * zi;
                        pu[k] += ui[k] * zi;
                    }
                }
            }
            double[][] out = new double[block][n];
            for (int i = 0; i < n; i++) {
                for (int c = 0; c < block; c++) {
                    double s = ((double) VectorUtil.dotProduct(u[i], vtz[c]) + VectorUtil.dotProduct(v[i], utz[c])) / 2
                            - diag[i] * z[c][i];
                    out[c][i] = (s * invSqrtDegree[i] + x[c][i]) / 2;
                }
            }
            return out;
        }

        private static float[] toFloat(double[] a) {
            float[] out = new float[a.length];
            for (int k = 0; k < a.length; k++) {
                out[k] = (float) a[k];
            }
            return out;
        }
    }

    private static double dot(double[] a, double[] b) {
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
