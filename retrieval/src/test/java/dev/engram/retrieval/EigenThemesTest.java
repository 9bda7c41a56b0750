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

    @Test
    void tooFewPassagesHaveNoThemes() {
        float[][] one = {{1f, 0f}};
        assertThat(EigenThemes.compute(one, new float[][] {null}, 2, 5, 0.1).themes())
                .isEmpty();
    }
}
