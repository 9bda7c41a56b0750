package dev.engram.retrieval;

import static dev.engram.retrieval.TestVectors.unit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Passages know their neighbours in their document or session, and the dense ranking is read in that context. */
class InContextTest {

    private static Passage passage(String id, String doc, int start) {
        return new Passage(id, doc, "", List.of(), id, id, start, start + 10);
    }

    @Test
    void neighboursAreByOffsetInADocumentAndByTimeThenArrivalInASession() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int a2 = b.passage(passage("a2", "A", 100), unit(1, 0, 0));
        int a0 = b.passage(passage("a0", "A", 0), unit(1, 0, 0));
        int a1 = b.passage(passage("a1", "A", 50), unit(1, 0, 0));
        // three turns, each its own document; the third said earliest, the first two at the same time (then by id)
        int t1 = b.passage(passage("t1", "turn-1", 0), unit(0, 1, 0));
        int t2 = b.passage(passage("t2", "turn-2", 0), unit(0, 1, 0));
        int t0 = b.passage(passage("t0", "turn-0", 0), unit(0, 1, 0));
        int other = b.passage(passage("x", "turn-x", 0), unit(0, 1, 0));
        b.session(t1, "s", 2_000);
        b.session(t2, "s", 2_000);
        b.session(t0, "s", 1_000);
        b.session(other, "another session", 1_500);
        MemoryGraph g = b.build();

        assertThat(new int[] {g.previousInContext(a0), g.nextInContext(a0)}).containsExactly(-1, a1);
        assertThat(new int[] {g.previousInContext(a1), g.nextInContext(a1)}).containsExactly(a0, a2);
        assertThat(new int[] {g.previousInContext(a2), g.nextInContext(a2)}).containsExactly(a1, -1);
        assertThat(new int[] {g.previousInContext(t0), g.nextInContext(t0)}).containsExactly(-1, t1);
        assertThat(new int[] {g.previousInContext(t1), g.nextInContext(t1)}).containsExactly(t0, t2);
        assertThat(new int[] {g.previousInContext(t2), g.nextInContext(t2)}).containsExactly(t1, -1);
        assertThat(new int[] {g.previousInContext(other), g.nextInContext(other)})
                .containsExactly(-1, -1);
        // places and sizes, what como's episodic windows are laid out by
        assertThat(new int[] {g.placeInContext[a0], g.placeInContext[a1], g.placeInContext[a2]})
                .containsExactly(0, 1, 2);
        assertThat(new int[] {g.placeInContext[t0], g.placeInContext[t1], g.placeInContext[t2]})
                .containsExactly(0, 1, 2);
        assertThat(new int[] {g.contextSize[a1], g.contextSize[t2], g.contextSize[other], g.placeInContext[other]})
                .containsExactly(3, 3, 1, 0);
        assertThat(InContext.any(g)).isTrue();
    }

    @Test
    void turnsOfOneTimeGoByTheirIdsInNaturalOrderWhateverOrderTheyWereAddedIn() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int t10 = b.passage(passage("p10", "c1-D1-10", 0), unit(1, 0, 0));
        int t2 = b.passage(passage("p2", "c1-D1-2", 0), unit(1, 0, 0));
        int t1 = b.passage(passage("p1", "c1-D1-1", 0), unit(1, 0, 0));
        for (int t : new int[] {t10, t2, t1}) {
            b.session(t, "s", 1_000);
        }
        MemoryGraph g = b.build();

        assertThat(new int[] {g.previousInContext(t1), g.nextInContext(t1)}).containsExactly(-1, t2);
        assertThat(new int[] {g.previousInContext(t2), g.nextInContext(t2)}).containsExactly(t1, t10);
        assertThat(ContextNeighbours.natural("a007", "a7")).isZero();
        assertThat(ContextNeighbours.natural("x9", "x10")).isNegative();
        assertThat(ContextNeighbours.natural("x", "x1")).isNegative();
    }

    @Test
    void aReplyRisesWithTheTurnItAnswers() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int question = b.passage(passage("q", "turn-1", 0), unit(1, 0, 0)); // "What did you paint last year?"
        int reply = b.passage(passage("r", "turn-2", 0), unit(0, 1, 0)); // "A sunset over the lake."
        int loose = b.passage(passage("l", "elsewhere", 0), unit(0.1f, 0, 1)); // faintly like the question
        b.session(question, "s", 1_000);
        b.session(reply, "s", 2_000);
        MemoryGraph g = b.build();
        float[] query = unit(1, 0, 0);
        List<Retrieval.Scored> dense = List.of(
                new Retrieval.Scored(question, 1.0), new Retrieval.Scored(loose, 0.1), new Retrieval.Scored(reply, 0));

        List<Retrieval.Scored> inContext = InContext.rerank(g, query, dense, 0.2, 10);

        assertThat(inContext).extracting(Retrieval.Scored::passage).containsExactly(question, reply, loose);
        assertThat(inContext.get(1).score()).isCloseTo(0.2, offset(1e-6));
        // weight 0 is the dense ranking itself; a depth cuts the list
        assertThat(InContext.rerank(g, query, dense, 0, 10)).isSameAs(dense);
        assertThat(InContext.rerank(g, query, dense, 0.2, 1))
                .extracting(Retrieval.Scored::passage)
                .containsExactly(question);
    }

    @Test
    void aCandidateOnlyANeighbourBroughtInIsScoredExactly() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int hit = b.passage(passage("h", "D", 0), unit(1, 0, 0));
        int next = b.passage(passage("n", "D", 20), unit(1, 1, 0));
        MemoryGraph g = b.build();

        List<Retrieval.Scored> out =
                InContext.rerank(g, unit(1, 0, 0), List.of(new Retrieval.Scored(hit, 1.0)), 0.2, 10);

        assertThat(out).extracting(Retrieval.Scored::passage).containsExactly(hit, next);
        assertThat(out.get(1).score()).isCloseTo(Math.sqrt(0.5) + 0.2, offset(1e-6));
        assertThat(InContext.any(MemoryGraph.builder(2).build())).isFalse();
    }
}
