package dev.engram.retrieval;

import static dev.engram.retrieval.TestVectors.unit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What a builder keeps per passage: by index, in arrays that grow with the passages, each passage once. */
class MemoryGraphBuilderTest {

    private static Passage passage(String id) {
        return new Passage(id, "doc-" + id, "", List.of(), id, id, 0, 10);
    }

    @Test
    void aPassageIdIsAddedOnce() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        b.passage(passage("p"), unit(1, 0, 0));
        assertThatThrownBy(() -> b.passage(passage("p"), unit(0, 1, 0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("passage p is already in the snapshot");
        int q = b.passage(passage("q"), unit(0, 1, 0));
        assertThat(new int[] {b.passageIndex("p"), b.passageIndex("q"), b.passageIndex("r")})
                .containsExactly(0, q, -1);
        MemoryGraph g = b.build();
        assertThat(g.passageCount()).isEqualTo(2);
        assertThat(g.passage(q).id()).isEqualTo("q");
        // the first one added is the one kept, with its vector
        assertThat(g.passageSearch.nearest(unit(1, 0, 0), 1).get(0).passage()).isEqualTo(0);
    }

    @Test
    void whatIsSaidOfAPassageNeedsThePassage() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        b.passage(passage("p"), unit(1, 0, 0));
        assertThatThrownBy(() -> b.session(1, "s", 0)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> b.time(5, 0)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> b.questions(-1, List.of(unit(1, 0, 0)))).isInstanceOf(IndexOutOfBoundsException.class);
        b.build();
        assertThatThrownBy(() -> b.passage(passage("late"), unit(0, 0, 1))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void datedPassagesGoByDayThenByIndexWhateverOrderTheirTimesCameIn() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int n = 70; // past the arrays' first sizes
        for (int i = 0; i < n; i++) {
            b.passage(passage("p" + i), unit(1, i, 0));
        }
        long day = 86_400_000L;
        // every third passage undated; the others on day (i % 4) - 1, dated from the last passage to the first, a
        // passage's time set twice (the second stands)
        for (int i = n - 1; i >= 0; i--) {
            if (i % 3 != 0) {
                b.time(i, 999 * day);
                b.time(i, (i % 4 - 1) * day + i);
            }
        }
        MemoryGraph g = b.build();
        int dated = 0;
        for (int i = 0; i < n; i++) {
            dated += i % 3 != 0 ? 1 : 0;
        }
        assertThat(g.datedPassages()).isEqualTo(dated);
        for (long d = -1; d <= 2; d++) {
            int[] on = g.passagesBetween(d, d);
            assertThat(on).isSorted().isNotEmpty();
            for (int p : on) {
                assertThat(p % 3).isNotZero();
                assertThat(p % 4 - 1L).isEqualTo(d);
            }
        }
        assertThat(g.passagesBetween(-1, 2)).hasSize(dated);
        assertThat(g.passagesBetween(999, 999)).isEmpty();
        // in day order, and by index within a day
        int[] all = g.passagesBetween(-1, 2);
        for (int k = 1; k < all.length; k++) {
            int a = all[k - 1] % 4;
            int c = all[k] % 4;
            assertThat(a < c || (a == c && all[k - 1] < all[k])).isTrue();
        }
    }

    @Test
    void utilityQuestionsAndSessionsStayWithTheirPassagesPastTheArraysFirstSizes() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int n = 40;
        for (int i = 0; i < n; i++) {
            b.passage(passage("p" + i), unit(1, i, 0));
        }
        b.questions(33, List.of(unit(0, 0, 1), unit(0, 1, 1)), List.of("p33#q0", "p33#q1"));
        b.questions(2, List.of(unit(1, 1, 1)));
        b.session(37, "s", 2_000);
        b.session(35, "s", 1_000);
        MemoryGraph g = b.build();
        assertThat(g.questionPassage).containsExactly(2, 33, 33);
        assertThat(g.maxQuestionsPerPassage).isEqualTo(2);
        assertThat(g.nextInContext(35)).isEqualTo(37);
        assertThat(g.previousInContext(37)).isEqualTo(35);
        assertThat(g.nextInContext(36)).isEqualTo(-1);
    }
}
