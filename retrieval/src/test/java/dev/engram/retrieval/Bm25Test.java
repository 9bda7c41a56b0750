package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class Bm25Test {

    /** The definition the hand-written tokenizer must match. */
    private static List<String> byRegex(String text) {
        Matcher m = Pattern.compile("[\\p{L}\\p{N}_]+").matcher(text.toLowerCase(Locale.ROOT));
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    @Test
    void tokensAreLowercaseRunsOfLettersDigitsAndUnderscores() {
        assertThat(Bm25.tokens("Zürich's naïve O'Brien paid £3.14 for snake_case, Ⅻ² 東京 İstanbul 🙂x"))
                .isEqualTo(byRegex("Zürich's naïve O'Brien paid £3.14 for snake_case, Ⅻ² 東京 İstanbul 🙂x"))
                .contains("zürich", "naïve", "snake_case", "東京");
        assertThat(Bm25.tokens("")).isEmpty();
        assertThat(Bm25.tokens("--")).isEmpty();
        // random text over ASCII, Latin-1, combining marks, numbers of other scripts and surrogate pairs
        String alphabet = "aZ9_ -.,'\u00e9\u00df\u0301\u0660\u2163\u00b2\u4e2d\u0130\ud83d\ude42\ud835\udc00";
        Random r = new Random(5);
        for (int n = 0; n < 500; n++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 30; i++) {
                int at = r.nextInt(alphabet.length());
                char c = alphabet.charAt(at);
                sb.append(c);
                if (Character.isHighSurrogate(c) && at + 1 < alphabet.length()) {
                    sb.append(alphabet.charAt(at + 1));
                }
            }
            String text = sb.toString();
            assertThat(Bm25.tokens(text)).as(text).isEqualTo(byRegex(text));
        }
    }

    /** The best documents from the sums a question's words touched rank and score exactly as every document's score. */
    private static final String[] WORDS = {
        "the", "of", "river", "paris", "born", "x", "film", "the", "a", "queen", "zürich"
    };

    /** Up to {@code max} words of {@link #WORDS}, repeats and all, each followed by a space. */
    private static String words(Random r, int max) {
        StringBuilder sb = new StringBuilder();
        for (int i = r.nextInt(max); i > 0; i--) {
            sb.append(WORDS[r.nextInt(WORDS.length)]).append(' ');
        }
        return sb.toString();
    }

    /** The k best documents with a score above 0, ranked from every document's score. */
    private static List<Retrieval.Scored> bestByEveryScore(Bm25 bm25, String query, int k) {
        double[] all = bm25.scores(query);
        List<Retrieval.Scored> out = new ArrayList<>();
        for (int u : Retrieval.top(all, k)) {
            if (all[u] > 0) {
                out.add(new Retrieval.Scored(u, all[u]));
            }
        }
        return out;
    }

    @Test
    void topRanksAndScoresAsEveryDocumentsScoreDoes() {
        Random r = new Random(11);
        for (int round = 0; round < 50; round++) {
            List<String> docs = new ArrayList<>();
            int n = 1 + r.nextInt(300);
            for (int d = 0; d < n; d++) {
                docs.add(words(r, 12));
            }
            Bm25 bm25 = new Bm25(docs, 1.2, 0.75);
            for (int asked = 0; asked < 5; asked++) { // in turn: what one query summed never leaks into the next
                String query = "unknown " + words(r, 6); // a repeated word counts twice, as in scores
                int k = 1 + r.nextInt(40);
                List<Retrieval.Scored> expected = bestByEveryScore(bm25, query, k);
                assertThat(bm25.top(query, k)).as("%s over %s", query, docs).isEqualTo(expected);
            }
        }
        assertThat(new Bm25(List.of(), 1.2, 0.75).top("anything", 5)).isEmpty();
    }

    /**
     * Words drawn as in real text (Zipf: a few words in most documents, most words in a few), over enough documents
     * that the best few are settled by a question's rare words: {@link Bm25#top} must then skip most of the common
     * words' postings, and still rank and score exactly as every document's score does, ties and repeated words too.
     */
    @Test
    void topSkipsTheCommonWordsPostingsAndStaysExact() {
        Random r = new Random(17);
        int vocabulary = 3000;
        double[] cumulative = new double[vocabulary];
        double total = 0;
        for (int w = 0; w < vocabulary; w++) {
            total += 1.0 / (w + 1);
            cumulative[w] = total;
        }
        long visited = 0;
        long walkedAll = 0;
        int pruned = 0;
        for (int round = 0; round < 4; round++) {
            List<String> docs = new ArrayList<>();
            for (int d = 0; d < 4000; d++) {
                docs.add(zipf(r, cumulative, total, 3 + r.nextInt(20)));
            }
            docs.add(""); // an empty document, and a document twice
            docs.add(docs.get(7));
            Bm25 bm25 = new Bm25(docs, 1.2, 0.75);
            for (int asked = 0; asked < 60; asked++) {
                String query = zipf(r, cumulative, total, 1 + r.nextInt(12)) + (asked % 5 == 0 ? " w0 w0" : "");
                int k = 1 + r.nextInt(30);
                List<Retrieval.Scored> expected = bestByEveryScore(bm25, query, k);
                Bm25.Search found = bm25.search(query, k);
                assertThat(found.best()).as("%s, k %d", query, k).isEqualTo(expected);
                long postings = 0;
                for (String t : Bm25.tokens(query)) {
                    postings += docs.stream()
                            .filter(d -> Bm25.tokens(d).contains(t))
                            .count();
                }
                visited += found.postingsVisited();
                walkedAll += postings;
                pruned += found.postingsVisited() < postings ? 1 : 0;
            }
        }
        // most questions hold a common word, and their best few are settled without its postings
        assertThat(pruned).isGreaterThan(120);
        assertThat(visited).isLessThan(walkedAll / 2);
    }

    /** {@code count} words {@code w0, w1, …} drawn by Zipf's law over the vocabulary, each followed by a space. */
    private static String zipf(Random r, double[] cumulative, double total, int count) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < count; i++) {
            int w = Arrays.binarySearch(cumulative, r.nextDouble() * total);
            sb.append('w').append(w < 0 ? -w - 1 : w).append(' ');
        }
        return sb.toString();
    }

    /**
     * Okapi BM25 as written in the textbook, each distinct word of the question in the order it first occurs, weighted
     * by how often the question has it: the scores must be exactly these.
     */
    private static double[] reference(List<String> docs, String query, double k1, double b) {
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
                            * (k1 + 1)
                            / (tf + k1 * (1 - b + b * tokens.get(d).size() / average));
                }
            }
        }
        return out;
    }

    /**
     * A question of the longest length made of one common word over and over (a hostile or careless client) costs what
     * the word asked once costs: one pass over its postings, not one per repetition.
     */
    @Test
    void aRepeatedWordCostsOnePassOverItsPostings() {
        Random r = new Random(23);
        List<String> docs = new ArrayList<>();
        for (int d = 0; d < 3000; d++) {
            docs.add("the " + words(r, 10) + (d % 100 == 0 ? "needle" : ""));
        }
        Bm25 bm25 = new Bm25(docs, 1.2, 0.75);
        String query = "needle " + "the ".repeat(1000);
        Bm25.Search found = bm25.search(query, 10);
        assertThat(found.best()).isEqualTo(bestByEveryScore(bm25, query, 10));
        // "the" is in every document: the question reaches the 30 needles and every document once, no more
        long postings =
                docs.size() + docs.stream().filter(d -> d.contains("needle")).count();
        assertThat(found.postingsVisited()).isLessThanOrEqualTo(2 * postings);
    }

    @Test
    void scoresAreOkapiBm25ToTheLastBit() {
        Random r = new Random(3);
        for (int round = 0; round < 30; round++) {
            List<String> docs = new ArrayList<>();
            for (int d = 1 + r.nextInt(100); d > 0; d--) {
                docs.add(words(r, 15));
            }
            String query = WORDS[r.nextInt(WORDS.length)] + " " + words(r, 5);
            double k1 = 0.5 + r.nextDouble();
            double b = r.nextDouble();
            assertThat(new Bm25(docs, k1, b).scores(query))
                    .as("%s over %s", query, docs)
                    .containsExactly(reference(docs, query, k1, b));
        }
    }
    /**
     * A word that occurs 254, 255, 256 and thousands of times in a document (the frequencies a byte a posting does not
     * hold, kept apart) scores exactly, beside postings of ordinary frequencies, in scores and in top.
     */
    @Test
    void frequenciesPastAByteScoreExactly() {
        Random r = new Random(5);
        List<String> docs = new ArrayList<>();
        for (int repeat : new int[] {254, 255, 256, 3000, 1, 70_000}) {
            docs.add(words(r, 10) + (" alpha".repeat(repeat)) + (" beta".repeat(repeat / 2 + 1)));
            docs.add(words(r, 12));
        }
        Bm25 index = new Bm25(docs, 1.2, 0.75);
        for (String query : List.of("alpha", "beta", "alpha beta " + WORDS[0], WORDS[1] + " " + WORDS[2])) {
            assertThat(index.scores(query)).as(query).containsExactly(reference(docs, query, 1.2, 0.75));
            assertThat(index.top(query, 3)).as(query).isEqualTo(bestByEveryScore(index, query, 3));
        }
    }

    /**
     * The index's own tokenizing (on the characters of the text, with its table of terms growing past a thousand)
     * scores as the reference over {@link Bm25#tokens} does: random text of many scripts, surrogate pairs and marks,
     * ending in a word or not.
     */
    @Test
    void theIndexTokenizesEveryTextAsTheQueryTokenizerDoes() {
        String alphabet = "abcdefghijklmnopqrstuvwxyzAZ09_ -.,'\u00e9\u00df\u0301\u0660\u2163\u00b2\u4e2d\u0130"
                + "\ud83d\ude42\ud835\udc00";
        Random r = new Random(11);
        List<String> docs = new ArrayList<>();
        for (int d = 0; d < 300; d++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 5 + r.nextInt(60); i > 0; i--) {
                int at = r.nextInt(alphabet.length());
                char c = alphabet.charAt(at);
                if (Character.isLowSurrogate(c)) {
                    continue;
                }
                sb.append(c);
                if (Character.isHighSurrogate(c)) {
                    sb.append(alphabet.charAt(at + 1));
                }
            }
            docs.add(sb.toString());
        }
        long distinct =
                docs.stream().flatMap(t -> Bm25.tokens(t).stream()).distinct().count();
        assertThat(distinct).isGreaterThan(1000);
        Bm25 bm25 = new Bm25(docs, 1.2, 0.75);
        for (int q = 0; q < 40; q++) {
            List<String> from = Bm25.tokens(docs.get(r.nextInt(docs.size())));
            String query = String.join(" ", from.subList(0, Math.min(3, from.size())));
            assertThat(bm25.scores(query)).as(query).containsExactly(reference(docs, query, 1.2, 0.75));
        }
    }

    /**
     * Indexes built one after the other with a term cache, over texts that change, leave and arrive between them,
     * score as indexes built from the texts alone; a text kept (the same object) is not read again; and the cache starts
     * afresh once its terms far outnumber those in use.
     */
    @Test
    void anIndexBuiltWithTheTermsOfTheLastScoresAsOneBuiltFromTheTexts() {
        Random r = new Random(31);
        List<String> docs = new ArrayList<>();
        for (int d = 0; d < 400; d++) {
            docs.add(words(r, 12));
        }
        TermCache cache = new TermCache();
        for (int round = 0; round < 6; round++) {
            if (round > 0) {
                for (int change = 0; change < 40; change++) { // replaced, removed, added: new strings
                    int at = r.nextInt(docs.size());
                    switch (change % 3) {
                        case 0 -> docs.set(at, words(r, 12) + " round" + round);
                        case 1 -> docs.remove(at);
                        default -> docs.add(at, words(r, 12) + " new" + round);
                    }
                }
            }
            List<String> texts = List.copyOf(docs);
            int[] reads = {0};
            Bm25 kept = new Bm25(
                    texts.size(),
                    d -> {
                        reads[0]++;
                        return texts.get(d);
                    },
                    texts::get,
                    cache,
                    1.2,
                    0.75);
            cache.built(kept.termCount());
            Bm25 fresh = new Bm25(texts, 1.2, 0.75);
            if (round > 0) {
                assertThat(reads[0])
                        .as("only the texts new since the last index")
                        .isBetween(1, 40);
            }
            for (int q = 0; q < 20; q++) {
                String query = words(r, 3) + " round" + round + " new" + round;
                assertThat(kept.scores(query)).as(query).containsExactly(fresh.scores(query));
                assertThat(kept.top(query, 10)).isEqualTo(fresh.top(query, 10));
            }
        }
        // 60,000 texts of words seen once: then an index over a single text starts the cache afresh
        List<String> once = new ArrayList<>();
        for (int d = 0; d < 60_000; d++) {
            once.add("w" + d);
        }
        new Bm25(once.size(), once::get, once::get, cache, 1.2, 0.75);
        cache.built(once.size());
        assertThat(cache.size()).isGreaterThan(60_000);
        Bm25 small = new Bm25(1, d -> "w1 again", d -> "kept", cache, 1.2, 0.75);
        cache.built(small.termCount());
        assertThat(cache.size()).as("started afresh").isZero();
        Bm25 after = new Bm25(1, d -> "w1 again", d -> "kept", cache, 1.2, 0.75);
        assertThat(after.scores("again")).containsExactly(new Bm25(List.of("w1 again"), 1.2, 0.75).scores("again"));
    }
}
