package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.ToIntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PassageWordsTest {

    private static final String[] WORDS = {"the", "of", "river", "paris", "born", "x", "film", "a", "queen", "zürich"};

    private static final ToIntFunction<String> BY_NUMBER = id -> Integer.parseInt(id.substring(1));

    /** Okapi BM25 of every document, with the (k1 + 1) factor Lucene leaves out (it ranks alike). */
    private static double[] reference(List<String> docs, String query) {
        double k1 = 1.2;
        double b = 0.75;
        List<List<String>> tokens = docs.stream().map(Bm25::tokens).toList();
        double average = tokens.stream().mapToInt(List::size).average().orElse(0);
        double[] out = new double[docs.size()];
        List<String> asked = Bm25.tokens(query);
        for (String t : asked.stream().distinct().toList()) {
            long df = tokens.stream().filter(d -> d.contains(t)).count();
            double idf = Math.log(1 + (docs.size() - df + 0.5) / (df + 0.5));
            double qtf = asked.stream().filter(t::equals).count();
            for (int d = 0; d < docs.size(); d++) {
                double tf = tokens.get(d).stream().filter(t::equals).count();
                if (tf > 0) {
                    out[d] += qtf
                            * idf
                            * tf
                            / (tf + k1 * (1 - b + b * tokens.get(d).size() / average));
                }
            }
        }
        return out;
    }

    private static String words(Random r, int min, int max) {
        StringBuilder sb = new StringBuilder();
        for (int i = min + r.nextInt(max - min + 1); i > 0; i--) {
            sb.append(WORDS[r.nextInt(WORDS.length)]).append(' ');
        }
        return sb.toString();
    }

    /** Short documents, whose lengths Lucene's norms keep exactly: the ranking and scores of the definition. */
    @Test
    void ranksAndScoresAsOkapiBm25() throws IOException {
        Random r = new Random(7);
        for (int round = 0; round < 20; round++) {
            List<String> docs = new ArrayList<>();
            try (PassageWords words = PassageWords.inMemory()) {
                int n = 1 + r.nextInt(40);
                for (int d = 0; d < n; d++) {
                    String title = words(r, 0, 2);
                    String text = words(r, 1, 12);
                    docs.add(title + "\n" + text);
                    words.put("p" + d, title, text);
                }
                words.publish();
                PassageWords.Search search = words.searchFor(BY_NUMBER);
                for (int q = 0; q < 10; q++) {
                    String query = words(r, 1, 5);
                    double[] expected = reference(docs, query);
                    List<Integer> order = IntStream.range(0, n)
                            .filter(d -> expected[d] > 0)
                            .boxed()
                            .sorted(Comparator.comparingDouble((Integer d) -> -expected[d]))
                            .toList();
                    int k = 1 + r.nextInt(n);
                    List<Retrieval.Scored> top = search.top(query, k);
                    assertThat(top).hasSize(Math.min(k, order.size()));
                    for (int i = 0; i < top.size(); i++) {
                        Retrieval.Scored s = top.get(i);
                        assertThat(s.score())
                                .as("%s: passage %d", query, s.passage())
                                .isCloseTo(expected[s.passage()], within(1e-4 * expected[s.passage()]));
                        // ties may come in either order; scores may not
                        assertThat(s.score()).isCloseTo(expected[order.get(i)], within(1e-4 * expected[order.get(i)]));
                    }
                }
            }
        }
    }

    @Test
    void aPassageWrittenAgainIsFoundByItsNewWordsAndARemovedOneNotAtAllOncePublished() throws IOException {
        try (PassageWords words = PassageWords.inMemory()) {
            PassageWords.Search search = words.searchFor(BY_NUMBER);
            words.put("p0", "Copper", "Copper is mined in Chile.");
            words.put("p1", "Rivers", "The Rhine flows to the sea.");
            assertThat(search.top("copper", 5)).as("not yet published").isEmpty();
            words.publish();
            assertThat(search.top("copper", 5))
                    .extracting(Retrieval.Scored::passage)
                    .containsExactly(0);

            words.put("p0", "Tin", "Tin is mined in Bolivia.");
            words.remove("p1");
            words.remove("p7"); // never written: nothing to remove
            assertThat(search.top("rhine", 5)).as("still the published state").hasSize(1);
            words.publish();
            assertThat(search.top("copper", 5)).isEmpty();
            assertThat(search.top("rhine", 5)).isEmpty();
            assertThat(search.top("bolivia tin", 5))
                    .extracting(Retrieval.Scored::passage)
                    .containsExactly(0);
            assertThat(words.published()).isEqualTo(1);

            words.clear();
            words.publish();
            assertThat(search.top("bolivia", 5)).isEmpty();
        }
    }

    /**
     * Replaced and removed passages stay in Lucene's statistics until merged away; the scores count the live passages
     * alone, so words written passage by passage, with replacements and removals, rank exactly as the same passages
     * indexed at once.
     */
    @Test
    void wordsWrittenOverTimeRankExactlyAsTheSamePassagesIndexedAtOnce() throws IOException {
        Random r = new Random(11);
        try (PassageWords overTime = PassageWords.inMemory()) {
            Map<Integer, String[]> live = new TreeMap<>();
            for (int step = 0; step < 400; step++) {
                int d = r.nextInt(60);
                if (r.nextInt(4) == 0) {
                    overTime.remove("p" + d);
                    live.remove(d);
                } else {
                    String[] words = {words(r, 0, 2), words(r, 1, 30)};
                    overTime.put("p" + d, words[0], words[1]);
                    live.put(d, words);
                }
                if (r.nextInt(25) == 0) {
                    overTime.publish();
                }
            }
            overTime.publish();
            // a last few replaced and removed, which no merge has dropped yet
            List<Integer> held = List.copyOf(live.keySet());
            for (int i = 0; i < 4; i++) {
                int d = held.get(i);
                String[] words = {"", words(r, 1, 30)};
                overTime.put("p" + d, words[0], words[1]);
                live.put(d, words);
            }
            overTime.remove("p" + held.get(4));
            live.remove(held.get(4));
            overTime.publish();
            try (PassageWords atOnce = PassageWords.inMemory()) {
                for (var e : live.entrySet()) {
                    atOnce.put("p" + e.getKey(), e.getValue()[0], e.getValue()[1]);
                }
                atOnce.publish();
                assertThat(overTime.published()).isEqualTo(atOnce.published()).isEqualTo(live.size());
                assertThat(overTime.deletedButHeld())
                        .as("replaced passages Lucene still counts")
                        .isPositive();
                for (int q = 0; q < 200; q++) {
                    String query = words(r, 1, 6);
                    int k = 1 + r.nextInt(20);
                    assertThat(overTime.searchFor(BY_NUMBER).top(query, k))
                            .as(query)
                            .isEqualTo(atOnce.searchFor(BY_NUMBER).top(query, k));
                }
            }
        }
    }

    /** Passages of one score rank in the snapshot's order, whatever order they were written in. */
    @Test
    void tiesRankByPassage() throws IOException {
        try (PassageWords words = PassageWords.inMemory()) {
            for (int d = 9; d >= 0; d--) {
                words.put("p" + d, "", "copper mine");
            }
            words.put("p10", "", "tin mine");
            words.publish();
            assertThat(words.searchFor(BY_NUMBER).top("copper", 3))
                    .extracting(Retrieval.Scored::passage)
                    .containsExactly(0, 1, 2);
        }
    }

    /** Passages written after a snapshot are passed over by its searches, however many rank above its own. */
    @Test
    void aSnapshotsSearchPassesOverPassagesItDoesNotHold() throws IOException {
        try (PassageWords words = PassageWords.inMemory()) {
            for (int d = 0; d < 300; d++) {
                words.put("new" + d, "", "river river river " + d);
            }
            for (int d = 0; d < 3; d++) {
                words.put("p" + d, "", "river and a long text of many other words " + d);
            }
            words.publish();
            PassageWords.Search old = words.searchFor(id -> id.startsWith("p") ? BY_NUMBER.applyAsInt(id) : -1);
            assertThat(old.top("river", 2))
                    .extracting(Retrieval.Scored::passage)
                    .hasSize(2)
                    .allMatch(p -> p < 3);
            assertThat(old.top("river", 10))
                    .extracting(Retrieval.Scored::passage)
                    .containsExactlyInAnyOrder(0, 1, 2);
        }
    }

    @Test
    void questionsWithoutWordsFindNothingAndOneOfThousandsOfWordsIsCutNotRefused() throws IOException {
        try (PassageWords words = PassageWords.inMemory()) {
            words.put("p0", "Copper", "Copper is mined in Chile.");
            words.publish();
            PassageWords.Search search = words.searchFor(BY_NUMBER);
            assertThat(search.top("", 5)).isEmpty();
            assertThat(search.top("-- ?! …", 5)).isEmpty();
            assertThat(search.top("copper", 0)).isEmpty();
            StringBuilder huge = new StringBuilder("copper");
            for (int i = 0; i < 5000; i++) {
                huge.append(" w").append(i);
            }
            assertThat(search.top(huge.toString(), 5))
                    .extracting(Retrieval.Scored::passage)
                    .containsExactly(0);
            // a word past the tokenizer's longest token is cut, not refused
            assertThat(search.top("a".repeat(100_000), 5)).isEmpty();
        }
    }

    @Test
    void aClosedIndexFindsNothing() throws IOException {
        PassageWords words = PassageWords.inMemory();
        words.put("p0", "Copper", "Copper is mined in Chile.");
        words.publish();
        PassageWords.Search search = words.searchFor(BY_NUMBER);
        words.close();
        assertThat(search.top("copper", 5)).isEmpty();
    }

    @Test
    void onDiskWhatAnEarlierProcessLeftIsReplaced(@TempDir Path dir) throws IOException {
        try (PassageWords words = PassageWords.open(dir.resolve("ns"))) {
            words.put("p0", "Copper", "Copper is mined in Chile.");
            words.publish();
            assertThat(words.searchFor(BY_NUMBER).top("chile", 5)).hasSize(1);
        }
        try (PassageWords words = PassageWords.open(dir.resolve("ns"))) {
            assertThat(words.published()).isZero();
            assertThat(words.searchFor(BY_NUMBER).top("chile", 5)).isEmpty();
        }
    }
}
