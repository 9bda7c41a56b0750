package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A whole snapshot and a recent layer of the passages written since, ranked as one: exactly as one snapshot of both for
 * {@code dense}, with what the recent layer holds again left out of the base, and scores that still descend with the
 * rank in every mode.
 */
class RecentLayerTest {

    private static final int DIMENSIONS = 16;

    private static Passage passage(String id, String text) {
        return new Passage(id, "d-" + id, id, List.of(), text, text, 0, text.length());
    }

    private static float[] randomUnit(Random random) {
        float[] v = new float[DIMENSIONS];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) random.nextGaussian();
        }
        return TestVectors.unit(v);
    }

    /** A snapshot of {@code passages} (id → vector), in their order, each naming an entity of its own and a shared one. */
    private static MemoryGraph graph(long version, Map<String, float[]> passages) {
        MemoryGraphBuilder b = MemoryGraph.builder(version);
        int shared = b.entity("shared", "Shared");
        for (Map.Entry<String, float[]> e : passages.entrySet()) {
            int p = b.passage(passage(e.getKey(), "text of " + e.getKey() + " about shared things"), e.getValue());
            b.link(b.entity("e-" + e.getKey(), "Entity " + e.getKey()), p);
            b.link(shared, p);
        }
        return b.build();
    }

    private static List<String> ids(List<RecentLayer.Hit> hits) {
        return hits.stream().map(h -> h.graph().passage(h.passage()).id()).toList();
    }

    @Test
    void denseOverTheBaseAndTheRecentLayerRanksAsDenseOverOneSnapshotOfBoth() {
        Random random = new Random(7);
        for (int round = 0; round < 20; round++) {
            Map<String, float[]> old = new LinkedHashMap<>();
            for (int i = 0; i < 200; i++) {
                old.put("p" + i, randomUnit(random));
            }
            // written since the base: new passages, and passages of the base written again with another vector
            Map<String, float[]> since = new LinkedHashMap<>();
            for (int i = 0; i < 15; i++) {
                since.put("n" + i, randomUnit(random));
            }
            for (int i = 0; i < 200; i += 20) {
                since.put("p" + i, randomUnit(random));
            }
            Map<String, float[]> now = new LinkedHashMap<>(old);
            now.putAll(since);
            MemoryGraph base = graph(1, old);
            MemoryGraph recent = graph(2, since);
            MemoryGraph whole = graph(2, now);
            float[] q = randomUnit(random);
            Retrieval.Mode dense = Retrieval.mode("dense");
            Retrieval.Params params = Retrieval.params(dense, Map.of());

            List<RecentLayer.Hit> merged = RecentLayer.merge(
                    base,
                    dense.retrieve(base, Retrieval.Query.of("q", q, t -> q), params, 30)
                            .ranked(),
                    recent,
                    dense.retrieve(recent, Retrieval.Query.of("q", q, t -> q), params, 30)
                            .ranked(),
                    since.keySet(),
                    q);
            List<Retrieval.Scored> expected = dense.retrieve(whole, Retrieval.Query.of("q", q, t -> q), params, 20)
                    .ranked();

            assertThat(ids(merged).subList(0, 20))
                    .as("round %d", round)
                    .isEqualTo(expected.stream()
                            .map(s -> whole.passage(s.passage()).id())
                            .toList());
            for (int i = 0; i < 20; i++) {
                assertThat(merged.get(i).score()).isCloseTo(expected.get(i).score(), offset(1e-6));
            }
            for (RecentLayer.Hit h : merged) {
                String id = h.graph().passage(h.passage()).id();
                if (since.containsKey(id)) {
                    assertThat(h.graph())
                            .as("a passage written since is the recent layer's copy")
                            .isSameAs(recent);
                }
            }
        }
    }

    @Test
    void aPassageOfTheBaseWrittenAgainIsTheRecentLayersAlone() {
        Random random = new Random(11);
        Map<String, float[]> old = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            old.put("p" + i, randomUnit(random));
        }
        float[] q = randomUnit(random);
        old.put("rewritten", q.clone()); // the base's copy is the query itself; the new one points elsewhere
        Map<String, float[]> since = Map.of("rewritten", randomUnit(random));
        MemoryGraph base = graph(1, old);
        MemoryGraph recent = graph(2, new LinkedHashMap<>(since));

        List<Retrieval.Scored> fromBase = new ArrayList<>();
        for (int i = 0; i < base.passageCount(); i++) {
            fromBase.add(new Retrieval.Scored(i, base.passageSimilarity(i, q)));
        }
        fromBase.sort((a, b) -> Double.compare(b.score(), a.score()));
        List<RecentLayer.Hit> merged = RecentLayer.merge(
                base,
                fromBase,
                recent,
                List.of(new Retrieval.Scored(0, recent.passageSimilarity(0, q))),
                Set.of("rewritten"),
                q);

        assertThat(ids(merged)).hasSize(11).containsOnlyOnce("rewritten");
        RecentLayer.Hit rewritten = merged.stream()
                .filter(h -> h.graph().passage(h.passage()).id().equals("rewritten"))
                .findFirst()
                .orElseThrow();
        assertThat(rewritten.graph()).isSameAs(recent);
        assertThat(ids(merged).get(0))
                .as("the base's old copy, alike the query, is gone")
                .isNotEqualTo("rewritten");
    }

    @Test
    void inEveryModeEachRecentPassageFollowsJustTheBasePassagesMoreAlikeAndScoresDescend() {
        Random random = new Random(5);
        Map<String, float[]> old = new LinkedHashMap<>();
        for (int i = 0; i < 120; i++) {
            old.put("p" + i, randomUnit(random));
        }
        float[] q = randomUnit(random);
        Map<String, float[]> since = new LinkedHashMap<>();
        since.put("twin", q.clone()); // the query's own vector: as alike as a passage can be
        for (int i = 0; i < 5; i++) {
            since.put("n" + i, randomUnit(random));
        }
        MemoryGraph base = graph(1, old);
        MemoryGraph recent = graph(2, since);
        int descending = 0;
        for (String name : Retrieval.modes()) {
            Retrieval.Mode mode = Retrieval.mode(name);
            Retrieval.Params params = Retrieval.params(mode, Map.of());
            List<Retrieval.Scored> fromBase = mode.retrieve(
                            base, Retrieval.Query.of("shared things", q, t -> q), params, 20)
                    .ranked();
            List<Retrieval.Scored> fromRecent = mode.retrieve(
                            recent, Retrieval.Query.of("shared things", q, t -> q), params, 20)
                    .ranked();
            List<RecentLayer.Hit> merged = RecentLayer.merge(base, fromBase, recent, fromRecent, since.keySet(), q);

            assertThat(merged).as(name).hasSize(fromBase.size() + fromRecent.size());
            assertThat(Set.copyOf(ids(merged))).as(name).hasSize(merged.size());
            assertThat(fromRecent).as(name).isNotEmpty();
            int baseBefore = 0;
            for (RecentLayer.Hit h : merged) {
                if (h.graph() == base) {
                    baseBefore++;
                    continue;
                }
                double similarity = recent.passageSimilarity(h.passage(), q);
                long moreAlike = fromBase.stream()
                        .filter(b -> base.passageSimilarity(b.passage(), q) > similarity)
                        .count();
                assertThat(baseBefore)
                        .as(
                                "%s: base passages before %s",
                                name, recent.passage(h.passage()).id())
                        .isEqualTo(moreAlike);
            }
            if (isDescending(fromBase)) {
                descending++;
                for (int i = 1; i < merged.size(); i++) {
                    assertThat(merged.get(i).score())
                            .as("%s at rank %d", name, i)
                            .isLessThanOrEqualTo(merged.get(i - 1).score());
                }
            }
        }
        assertThat(descending).as("modes whose scores descend").isGreaterThanOrEqualTo(2);
    }

    @Test
    void whenMostOfTheBasesBestWereWrittenAgainTheBaseIsAskedForAsManyMore() {
        Random random = new Random(13);
        float[] q = randomUnit(random);
        Map<String, float[]> old = new LinkedHashMap<>();
        for (int i = 0; i < 300; i++) {
            old.put("p" + i, randomUnit(random));
        }
        MemoryGraph base = graph(1, old);
        Retrieval.Mode dense = Retrieval.mode("dense");
        Retrieval.Params params = Retrieval.params(dense, Map.of());
        // the base's 40 passages most alike the query are all written again, now far from it
        Map<String, float[]> since = new LinkedHashMap<>();
        for (Retrieval.Scored s : dense.retrieve(base, Retrieval.Query.of("q", q, t -> q), params, 40)
                .ranked()) {
            float[] away = q.clone();
            for (int d = 0; d < away.length; d++) {
                away[d] = -away[d] + 0.1f * (float) random.nextGaussian();
            }
            since.put(base.passage(s.passage()).id(), TestVectors.unit(away));
        }
        Map<String, float[]> now = new LinkedHashMap<>(old);
        now.putAll(since);
        MemoryGraph recent = graph(2, since);
        MemoryGraph whole = graph(2, now);

        RecentLayer.Ranked ranked = RecentLayer.retrieve(
                dense,
                params,
                10,
                base,
                Retrieval.Query.of("q", q, t -> q),
                recent,
                Retrieval.Query.of("q", q, t -> q),
                since.keySet(),
                since.size());

        assertThat(ids(ranked.hits()).subList(0, 10))
                .isEqualTo(dense.retrieve(whole, Retrieval.Query.of("q", q, t -> q), params, 10).ranked().stream()
                        .map(s -> whole.passage(s.passage()).id())
                        .toList());
        assertThat(ranked.explanation()).containsKey("recent");
        @SuppressWarnings("unchecked")
        Map<String, Object> layer = (Map<String, Object>) ranked.explanation().get("recent");
        assertThat(layer)
                .containsEntry("passages", 40)
                .containsEntry("changed", 40)
                .containsEntry("graph_version", 2L);
    }

    private static boolean isDescending(List<Retrieval.Scored> ranked) {
        for (int i = 1; i < ranked.size(); i++) {
            if (ranked.get(i).score() > ranked.get(i - 1).score()) {
                return false;
            }
        }
        return true;
    }
}
