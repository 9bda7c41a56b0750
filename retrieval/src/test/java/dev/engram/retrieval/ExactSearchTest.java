package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The exact scan: a broken embedding (a non-finite value) is never found, whatever the query. */
class ExactSearchTest {

    private static List<Integer> found(VectorIndex index, float[] query) {
        return index.nearest(query, 10).stream().map(Retrieval.Scored::passage).toList();
    }

    @Test
    void aVectorWithANonFiniteValueIsNeverFound() {
        VectorIndex index = VectorIndex.exact(new float[][] {
            {1, 0}, {Float.NaN, 0}, {Float.POSITIVE_INFINITY, 0}, {0, 1}, {0.5f, Float.NEGATIVE_INFINITY}, {0.6f, 0.8f}
        });

        assertThat(found(index, new float[] {1, 0})).containsExactly(0, 5, 3);
        // infinity times a zero of the query is NaN, not zero: still never found
        assertThat(found(index, new float[] {0, 1})).containsExactly(3, 5, 0);
        assertThat(found(index, new float[] {-1, 0})).containsExactly(3, 5, 0);
    }
}
