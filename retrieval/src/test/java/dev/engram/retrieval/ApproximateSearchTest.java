package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Every mode over HNSW indexes ranks as over exact scans when the graph search is wide enough to be exhaustive: the
 * modes read vectors only through their indexes, so nothing depends on which kind of search a snapshot has.
 */
class ApproximateSearchTest {

    private static final int DIM = 24;

    /**
     * @param interleaved whether a passage's facts are added apart (every passage's first, then every passage's second)
     *     rather than one after the other, as a snapshot's loader adds them: a fact's key is then not where its ordinal
     *     puts it, and searches find it by a map of the keys
     */
    private static MemoryGraph graph(VectorIndexer indexer, boolean interleaved) {
        Random r = new Random(11);
        float[][] passages = HnswVectorsTest.clustered(400, DIM, 12, 21);
        float[][] near = HnswVectorsTest.clustered(400 * 6, DIM, 12, 22);
        MemoryGraphBuilder b = MemoryGraph.builder(1).indexer(indexer);
        for (int p = 0; p < passages.length; p++) {
            String text = "Passage " + p + " about topic" + (p % 12) + " and thing" + (p % 37) + ".";
            b.passage(
                    new Passage("p" + p, "d" + (p / 4), "Title " + p, List.of(), text, text, 0, text.length()),
                    passages[p]);
        }
        for (int e = 0; e < 60; e++) {
            int entity = b.entity("e" + e, "thing" + e);
            b.entityVector(entity, near[e]);
            for (int k = 0; k < 5; k++) {
                b.link(entity, r.nextInt(passages.length));
            }
        }
        for (int i = 0; i < passages.length * 2; i++) {
            int p = interleaved ? i % passages.length : i / 2;
            int f = interleaved ? i / passages.length : i % 2;
            b.fact(
                    "fact " + f + " of passage " + p,
                    p,
                    r.nextInt(60),
                    r.nextInt(60),
                    0.8,
                    mean(passages[p], near[p * 6 + f]));
        }
        for (int p = 0; p < passages.length; p++) {
            List<float[]> questions = new ArrayList<>();
            for (int q = 0; q < 3; q++) {
                questions.add(mean(passages[p], near[p * 6 + 2 + q]));
            }
            b.questions(p, questions);
        }
        return b.build();
    }

    private static float[] mean(float[] a, float[] b) {
        float[] out = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = (a[i] + b[i]) / 2;
        }
        return HnswVectorsTest.unit(out);
    }

    @Test
    void everyModeRanksTheSameOverExhaustiveGraphSearchAsOverScans() throws Exception {
        for (boolean interleaved : new boolean[] {false, true}) {
            sameRanks(interleaved);
        }
    }

    private static void sameRanks(boolean interleaved) throws Exception {
        MemoryGraph exact = graph(VectorIndexer.EXACT, interleaved);
        try (HnswVectors hnsw = new HnswVectors(null, 1, 4000)) {
            MemoryGraph approximate = graph(hnsw, interleaved);
            assertThat(approximate.vectorSearch()).containsValues("hnsw").doesNotContainValue("exact");
            assertThat(exact.vectorSearch()).doesNotContainValue("hnsw");
            float[][] queries = HnswVectorsTest.clustered(12, DIM, 12, 23);
            for (float[] q : queries) {
                // each kind's search finds the same vectors at the same positions (a key's position is looked up
                // from its passage and ordinal, or from a map of the keys when they are not laid out that way)
                assertThat(positions(approximate.factSearch, q)).isEqualTo(positions(exact.factSearch, q));
                assertThat(positions(approximate.questionSearch, q)).isEqualTo(positions(exact.questionSearch, q));
                assertThat(positions(approximate.entitySearch, q)).isEqualTo(positions(exact.entitySearch, q));
                assertThat(positions(approximate.passageSearch, q)).isEqualTo(positions(exact.passageSearch, q));
            }
            for (String name : Retrieval.modes()) {
                Retrieval.Mode mode = Retrieval.mode(name);
                for (int i = 0; i < queries.length; i++) {
                    float[] q = queries[i];
                    Retrieval.Query query = Retrieval.Query.of("what about thing" + i + " and topic" + i, q, t -> q);
                    Retrieval.Params params = Retrieval.params(mode, Map.of());
                    List<String> expected = ids(exact, mode.retrieve(exact, query, params, 5));
                    assertThat(expected).as("%s, query %d", name, i).hasSize(5);
                    assertThat(ids(approximate, mode.retrieve(approximate, query, params, 5)))
                            .as("%s, query %d", name, i)
                            .isEqualTo(expected);
                }
            }
            approximate.release();
        }
    }

    private static List<Integer> positions(VectorIndex index, float[] q) {
        return index.nearest(q, 20).stream().map(Retrieval.Scored::passage).toList();
    }

    private static List<String> ids(MemoryGraph g, Retrieval.Result r) {
        return r.ranked().stream().map(s -> g.passage(s.passage()).id()).toList();
    }
}
