package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class RequestWorkTest {

    private static float[] vectorOf(String text) {
        return new float[] {text.length(), text.charAt(0)};
    }

    @Test
    void embedsTheTextsOfARequestSideBySideEachOnceAndInTheirOrder() {
        // the first two calls wait for each other: they can only both return true if two threads embed at once
        CountDownLatch both = new CountDownLatch(2);
        AtomicBoolean overlapped = new AtomicBoolean(true);
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        Function<String, float[]> embedder = text -> {
            calls.computeIfAbsent(text, t -> new AtomicInteger()).incrementAndGet();
            both.countDown();
            try {
                if (!both.await(20, TimeUnit.SECONDS)) {
                    overlapped.set(false);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            return vectorOf(text);
        };
        List<String> texts = List.of("a", "bb", "ccc", "dddd", "eeeee");

        List<float[]> vectors = RequestWork.embedAll(embedder, texts);

        assertThat(overlapped).as("two texts were embedded at the same time").isTrue();
        for (int i = 0; i < texts.size(); i++) {
            assertThat(vectors.get(i)).containsExactly(vectorOf(texts.get(i)));
            assertThat(calls.get(texts.get(i))).hasValue(1);
        }
        assertThat(calls).hasSize(texts.size());
    }

    @Test
    void aTextThatCannotBeEmbeddedFailsTheRequestWhicheverThreadTookIt() {
        for (int round = 0; round < 20; round++) {
            assertThatThrownBy(() -> RequestWork.embedAll(
                            text -> {
                                if (text.equals("bad")) {
                                    throw new IllegalArgumentException("cannot embed " + text);
                                }
                                return vectorOf(text);
                            },
                            List.of("good", "bad", "fine")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("cannot embed bad");
        }
        assertThat(RequestWork.embedAll(RequestWorkTest::vectorOf, List.of())).isEmpty();
        assertThat(RequestWork.embedAll(RequestWorkTest::vectorOf, List.of("x")))
                .singleElement()
                .satisfies(v -> assertThat(v).containsExactly(vectorOf("x")));
    }

    @Test
    void oneScanForManyQueriesFindsWhatEachQueryFindsAlone() {
        Random random = new Random(7);
        float[][] vectors = new float[600][];
        for (int i = 0; i < vectors.length; i++) {
            // every fifth vector repeats an earlier one: ties, broken by the smaller index either way
            vectors[i] = i % 5 == 4 ? vectors[i - 3].clone() : randomUnit(random, 16);
        }
        vectors[17] = null;
        VectorIndex index = VectorIndex.exact(vectors);
        List<float[]> queries = new ArrayList<>();
        for (int j = 0; j < 5; j++) {
            queries.add(randomUnit(random, 16));
        }

        List<List<Retrieval.Scored>> each = index.nearestEach(queries, 25);

        assertThat(each).hasSize(queries.size());
        for (int j = 0; j < queries.size(); j++) {
            assertThat(each.get(j)).isEqualTo(index.nearest(queries.get(j), 25)).hasSize(25);
        }
        assertThatThrownBy(() -> index.nearestEach(List.of(new float[3]), 5))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("re-embed");
    }

    @Test
    void aRequestSearchesAVectorOnceAndServesASmallerKFromTheHeadOfThatSearch() {
        AtomicInteger scans = new AtomicInteger();
        MemoryGraphBuilder b = MemoryGraph.builder(1).indexer(batches -> {
            VectorIndexer.Indexed exact = VectorIndexer.EXACT.index(batches);
            VectorIndex passages = exact.byKind().get("passage");
            Map<String, VectorIndex> byKind = new ConcurrentHashMap<>(exact.byKind());
            byKind.put("passage", new VectorIndex() {
                @Override
                public List<Retrieval.Scored> nearest(float[] query, int k) {
                    scans.incrementAndGet();
                    return passages.nearest(query, k);
                }

                @Override
                public String kind() {
                    return "exact";
                }
            });
            return new VectorIndexer.Indexed(byKind, exact.release());
        });
        Random random = new Random(3);
        for (int i = 0; i < 30; i++) {
            String id = "p" + i;
            b.passage(new Passage(id, "doc", id, List.of(), id, id, 0, 1), randomUnit(random, 8));
        }
        MemoryGraph g = b.build();
        float[] v = randomUnit(random, 8);
        Retrieval.Query q = Retrieval.Query.of("q", v, t -> v);

        List<Retrieval.Scored> wide = q.nearestPassages(g, v, 10);
        List<Retrieval.Scored> narrow = q.nearestPassages(g, v, 4);

        assertThat(scans).hasValue(1);
        assertThat(narrow).isEqualTo(wide.subList(0, 4)).isEqualTo(g.passageSearch.nearest(v, 4));
        q.nearestPassages(g, v, 12);
        q.nearestPassages(g, v.clone(), 4);
        assertThat(scans)
                .as("a wider search, and another vector, are searched anew")
                .hasValue(4);
        Retrieval.Query.of("q", v, t -> v).nearestPassages(g, v, 4);
        assertThat(scans).as("another request shares nothing").hasValue(5);
    }

    private static float[] randomUnit(Random random, int dims) {
        float[] v = new float[dims];
        double norm = 0;
        for (int d = 0; d < dims; d++) {
            v[d] = (float) random.nextGaussian();
            norm += v[d] * v[d];
        }
        for (int d = 0; d < dims; d++) {
            v[d] /= (float) Math.sqrt(norm);
        }
        return v;
    }
}
