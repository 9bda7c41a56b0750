package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PairsTest {

    @Test
    void eachGroupHasItsValuesInTheOrderAddedEachOnce() {
        Random r = new Random(29);
        for (int round = 0; round < 200; round++) {
            int groups = 1 + r.nextInt(40);
            int range = 1 + r.nextInt(60);
            List<Set<Integer>> expected = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                expected.add(new LinkedHashSet<>());
            }
            Pairs pairs = new Pairs();
            for (int i = r.nextInt(1000); i > 0; i--) { // past the first growth, groups interleaved, repeats
                int g = r.nextInt(groups);
                int v = r.nextInt(range);
                pairs.add(g, v);
                expected.get(g).add(v);
            }
            int[][] grouped = pairs.grouped(groups, range);
            assertThat(grouped.length).isEqualTo(groups);
            for (int g = 0; g < groups; g++) {
                assertThat(grouped[g])
                        .as("group %d", g)
                        .containsExactly(expected.get(g).stream()
                                .mapToInt(Integer::intValue)
                                .toArray());
            }
        }
        assertThat(new Pairs().grouped(3, 0)).isDeepEqualTo(new int[][] {{}, {}, {}});
        assertThatThrownBy(() -> new Pairs().add(-1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    /** A link or fact that names a passage or entity the builder does not have fails where it is added. */
    @Test
    void aBuilderRefusesLinksAndFactsToWhatItDoesNotHave() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int p = b.passage(new Passage("p", "d", "t", List.of(), "text", "memory", 0, 4), new float[] {1});
        int e = b.entity("e", "E");
        assertThatThrownBy(() -> b.link(e, p + 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> b.link(e + 1, p)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> b.fact("f", Integer.MAX_VALUE, e, -1, 1.0, new float[] {1}))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> b.fact("f", p, e, e + 1, 1.0, new float[] {1}))
                .isInstanceOf(IndexOutOfBoundsException.class);
        b.link(e, p);
        b.fact("f", p, e, -1, 1.0, new float[] {1});
        MemoryGraph g = b.build();
        assertThat(g.entityPassages[e]).containsExactly(p);
        assertThat(g.factCount()).isEqualTo(1);
    }

    /**
     * The keys of fact and question vectors a caller passes are the ones the builder would make, and reach the vector
     * index as given (the same objects, which the index then finds without hashing new strings); a builder builds once.
     */
    @Test
    void keysGivenByTheCallerAreTheBuildersOwnAndReachTheIndexAsGiven() {
        List<List<VectorIndexer.Batch>> seen = new ArrayList<>();
        String factKey = MemoryGraph.factKey("p", 1);
        String questionKey = MemoryGraph.questionKey("p", 0);
        MemoryGraphBuilder keyed = builder(seen);
        int p = keyed.passage(new Passage("p", "d", "t", List.of(), "text", "m", 0, 4), new float[] {1});
        keyed.fact("f", "", p, -1, -1, 1.0, new float[] {1}, factKey);
        keyed.questions(p, List.of(new float[] {1}), List.of(questionKey));
        keyed.build();
        assertThatThrownBy(keyed::build).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> keyed.entity("e", "E")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> builder(seen).questions(0, List.of(new float[] {1}), List.of()))
                .isInstanceOf(IllegalArgumentException.class);

        MemoryGraphBuilder made = builder(seen);
        made.passage(new Passage("p", "d", "t", List.of(), "text", "m", 0, 4), new float[] {1});
        made.fact("f", "", 0, -1, -1, 1.0, new float[] {1});
        made.questions(0, List.of(new float[] {1}));
        made.build();

        assertThat(keys(seen.get(0), "fact")).containsExactly("p#f1").isEqualTo(keys(seen.get(1), "fact"));
        assertThat(keys(seen.get(0), "question")).containsExactly("p#q0").isEqualTo(keys(seen.get(1), "question"));
        assertThat(keys(seen.get(0), "fact").get(0)).isSameAs(factKey);
        assertThat(keys(seen.get(0), "question").get(0)).isSameAs(questionKey);
    }

    private static MemoryGraphBuilder builder(List<List<VectorIndexer.Batch>> seen) {
        return MemoryGraph.builder(1).indexer(batches -> {
            seen.add(batches);
            return VectorIndexer.EXACT.index(batches);
        });
    }

    private static List<String> keys(List<VectorIndexer.Batch> batches, String kind) {
        return batches.stream()
                .filter(b -> b.kind().equals(kind))
                .findFirst()
                .orElseThrow()
                .keys();
    }
}
