package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Como's episodic layer: windows over a context's passages, scored around the query's nearest passages only. */
class EpisodicWindowsTest {

    private static float[] unit(Random r, int dim) {
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) r.nextGaussian();
        }
        MemoryGraph.normalize(v);
        return v;
    }

    /** Documents of 1 to 60 passages (windows of 3, 5 and 8), and a session of 25 turns, added in shuffled order. */
    private static MemoryGraph graph(Random r, List<List<Integer>> contexts) {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int[] lengths = {1, 2, 3, 4, 7, 20, 21, 49, 60};
        for (int d = 0; d < lengths.length; d++) {
            List<Integer> members = new ArrayList<>();
            for (int k = lengths[d] - 1; k >= 0; k--) { // last passage first: order is by offset, not by arrival
                members.add(
                        0,
                        b.passage(
                                new Passage("d" + d + "p" + k, "doc" + d, "", List.of(), "", "", k * 100, k * 100 + 50),
                                unit(r, 8)));
            }
            contexts.add(members);
        }
        List<Integer> turns = new ArrayList<>();
        for (int t = 0; t < 25; t++) {
            int p = b.passage(new Passage("t" + t, "turn-" + t, "", List.of(), "", "", 0, 10), unit(r, 8));
            b.session(p, "session", 1_000L * t);
            turns.add(p);
        }
        contexts.add(turns);
        return b.build();
    }

    private static double windowScore(MemoryGraph g, float[] q, int[] members) {
        float[] sum = new float[q.length];
        for (int m : members) {
            float[] v = g.passageVectors.get(m);
            for (int i = 0; i < sum.length; i++) {
                sum[i] += v[i];
            }
        }
        MemoryGraph.normalize(sum);
        return Retrieval.dot(q, sum);
    }

    @Test
    void aroundEveryPassageItFindsWhatScoringEveryWindowFinds() {
        Random r = new Random(7);
        List<List<Integer>> contexts = new ArrayList<>();
        MemoryGraph g = graph(r, contexts);
        List<Retrieval.Scored> all = new ArrayList<>();
        for (int p = 0; p < g.passageCount(); p++) {
            all.add(new Retrieval.Scored(p, 0));
        }
        for (int trial = 0; trial < 20; trial++) {
            float[] q = unit(r, 8);
            // every window of every context, as EpisodicWindows.ranges lays them
            List<EpisodicWindows.Window> expected = new ArrayList<>();
            for (List<Integer> context : contexts) {
                for (int[] range : EpisodicWindows.ranges(context.size())) {
                    int[] members = context.subList(range[0], range[1]).stream()
                            .mapToInt(Integer::intValue)
                            .toArray();
                    expected.add(new EpisodicWindows.Window(members, windowScore(g, q, members)));
                }
            }
            expected.sort(
                    Comparator.comparingDouble(EpisodicWindows.Window::score).reversed());

            List<EpisodicWindows.Window> found = EpisodicWindows.nearest(g, q, all, expected.size() + 5);

            assertThat(found).hasSize(expected.size()); // each window once, however many of its passages are around
            for (int i = 0; i < expected.size(); i++) {
                assertThat(found.get(i).members())
                        .containsExactly(expected.get(i).members());
                assertThat(found.get(i).score()).isCloseTo(expected.get(i).score(), offset(1e-5));
            }
        }
    }

    @Test
    void onlyTheWindowsHoldingAPassageAroundAreScored() {
        Random r = new Random(11);
        List<List<Integer>> contexts = new ArrayList<>();
        MemoryGraph g = graph(r, contexts);
        List<Integer> doc = contexts.get(8); // 60 passages: windows of 8, a stride of 4
        int p = doc.get(13);

        List<EpisodicWindows.Window> found =
                EpisodicWindows.nearest(g, unit(r, 8), List.of(new Retrieval.Scored(p, 1)), 10);

        // the windows from 8 and from 12 hold the 14th passage; no other is read
        assertThat(found).hasSize(2);
        assertThat(found.stream().map(w -> w.members()[0]).toList()).containsExactlyInAnyOrder(doc.get(8), doc.get(12));
        assertThat(found).allSatisfy(w -> assertThat(w.members()).hasSize(8).contains(p));
        // a passage alone in its document is a window of one, its own vector
        int alone = contexts.get(0).get(0);
        float[] q = g.passageVectors.get(alone);
        List<EpisodicWindows.Window> one = EpisodicWindows.nearest(g, q, List.of(new Retrieval.Scored(alone, 1)), 10);
        assertThat(one).singleElement().satisfies(w -> {
            assertThat(w.members()).containsExactly(alone);
            assertThat(w.score()).isCloseTo(1.0, offset(1e-5));
        });
        assertThat(EpisodicWindows.nearest(g, q, List.of(), 10)).isEmpty();
    }
}
