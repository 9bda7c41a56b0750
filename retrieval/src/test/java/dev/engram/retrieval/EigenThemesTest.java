package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class EigenThemesTest {

    /** Unit vector near one of two directions, with a little noise. */
    private static float[] near(float[] direction, Random random) {
        float[] v = new float[direction.length];
        double norm = 0;
        for (int i = 0; i < v.length; i++) {
            v[i] = direction[i] + (float) (0.05 * random.nextGaussian());
            norm += v[i] * v[i];
        }
        for (int i = 0; i < v.length; i++) {
            v[i] /= (float) Math.sqrt(norm);
        }
        return v;
    }

    @Test
    void theSecondThemeSeparatesTwoTopics() {
        Random random = new Random(1);
        int d = 16;
        float[] a = new float[d];
        float[] b = new float[d];
        a[0] = 1;
        b[1] = 1;
        int n = 12;
        float[][] passages = new float[n][];
        float[][] questions = new float[n][];
        for (int i = 0; i < n; i++) {
            float[] topic = i < 6 ? a : b;
            passages[i] = near(topic, random);
            float[] q1 = near(topic, random);
            float[] q2 = near(topic, random);
            questions[i] = new float[d];
            for (int k = 0; k < d; k++) {
                questions[i][k] = q1[k] + q2[k];
            }
        }
        EigenThemes.Result r = EigenThemes.compute(passages, questions, 2, 4, 0.1);

        assertThat(r.themes()).hasSize(2);
        assertThat(r.themes().get(0).eigenvalue()).isCloseTo(1.0, Offset.offset(1e-6));
        assertThat(r.themes().get(1).eigenvalue()).isLessThan(1.0).isGreaterThan(0.5);
        // the second theme's strongest passages all come from one topic
        int[] members = r.themes().get(1).members();
        boolean allFirst = Arrays.stream(members).allMatch(i -> i < 6);
        boolean allSecond = Arrays.stream(members).allMatch(i -> i >= 6);
        assertThat(allFirst || allSecond).as(Arrays.toString(members)).isTrue();
        assertThat(r.essential()).isEqualTo(2);
    }

    /**
     * The themes are the leading eigenpairs of the normalized graph Laplacian variant of GEM-RAG: against a dense
     * eigen-decomposition of the explicitly built matrix, on topics of different sizes so that the eigenvalues are
     * apart.
     */
    @Test
    void themesAreTheLeadingEigenpairsOfTheExplicitMatrix() {
        Random random = new Random(3);
        int d = 24;
        int[] sizes = {30, 20, 14, 9, 6};
        int n = Arrays.stream(sizes).sum();
        float[][] passages = new float[n][];
        float[][] questions = new float[n][];
        int i = 0;
        for (int t = 0; t < sizes.length; t++) {
            float[] topic = new float[d];
            topic[t] = 1;
            for (int j = 0; j < sizes[t]; j++, i++) {
                passages[i] = near(topic, random);
                // a share of the passages has no utility questions
                if (j % 4 != 3) {
                    float[] q1 = near(topic, random);
                    float[] q2 = near(topic, random);
                    questions[i] = new float[d];
                    for (int k = 0; k < d; k++) {
                        questions[i][k] = q1[k] + q2[k];
                    }
                }
            }
        }
        // S = (U Vᵀ + V Uᵀ) / 2 without its diagonal, L = D^-1/2 S D^-1/2
        double[][] s = new double[n][n];
        double[] degree = new double[n];
        for (int p = 0; p < n; p++) {
            for (int q = 0; q < n; q++) {
                if (p != q) {
                    s[p][q] = (dot(questions[p], passages[q]) + dot(questions[q], passages[p])) / 2;
                    degree[p] += s[p][q];
                }
            }
        }
        double[][] l = new double[n][n];
        for (int p = 0; p < n; p++) {
            for (int q = 0; q < n; q++) {
                double dp = degree[p] > 1e-9 ? 1 / Math.sqrt(degree[p]) : 0;
                double dq = degree[q] > 1e-9 ? 1 / Math.sqrt(degree[q]) : 0;
                l[p][q] = dp * s[p][q] * dq;
            }
        }
        double[] values = new double[n];
        double[][] vectors = new double[n][n];
        EigenThemes.symmetricEigen(l, values, vectors);

        EigenThemes.Result r = EigenThemes.compute(passages, questions, 4, 5, 0.1);

        assertThat(r.themes()).hasSize(4);
        for (int c = 0; c < 4; c++) {
            EigenThemes.Theme theme = r.themes().get(c);
            assertThat(theme.eigenvalue()).as("eigenvalue %d", c).isCloseTo(values[c], Offset.offset(1e-5));
            // the members are the largest components of the exact eigenvector, in order (up to its sign)
            double[] exact = new double[n];
            for (int p = 0; p < n; p++) {
                exact[p] = vectors[p][c];
            }
            double sign = Math.signum(exact[theme.members()[0]]);
            for (int m = 0; m < theme.members().length; m++) {
                assertThat(theme.weights()[m])
                        .as("theme %d member %d", c, m)
                        .isCloseTo(sign * exact[theme.members()[m]], Offset.offset(1e-5));
            }
            double bound = theme.weights()[theme.weights().length - 1];
            long larger =
                    Arrays.stream(exact).filter(e -> sign * e > bound + 1e-6).count();
            assertThat(larger).as("components above theme %d's last member", c).isLessThan(theme.members().length);
        }
    }

    private static double dot(float[] a, float[] b) {
        if (a == null) {
            return 0;
        }
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    @Test
    void tooFewPassagesHaveNoThemes() {
        float[][] one = {{1f, 0f}};
        assertThat(EigenThemes.compute(one, new float[][] {null}, 2, 5, 0.1).themes())
                .isEmpty();
    }
}
