package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;

/** Okapi BM25 over lowercase word tokens, with an inverted index. */
final class Bm25 {

    /**
     * A term of a query: where its documents (ascending) and its frequency in each lie in {@link #docs} and {@link
     * #tfs}, from {@code from} to {@code to}, and the most its saturated frequency {@code tf·(k1 + 1) / (tf + length
     * weight)} reaches in any of them, which bounds what the term adds to a document's score.
     */
    private record Postings(int term, int from, int to, double maxWeight) {
        int size() {
            return to - from;
        }
    }

    /**
     * The index's terms; a term's postings are {@code docs[offsets[t]..offsets[t + 1])}. All terms' postings lie in two
     * flat arrays, which a query walks without following a reference per document, and a term costs a slot in a table
     * of ints and three numbers, not a map entry and two arrays: a namespace of 100k passages has some hundreds of
     * thousands of terms.
     */
    private final List<String> terms;

    private final IdIndex termIndex;
    private final int[] offsets;
    private final int[] docs;
    /**
     * Per posting, the term's frequency in the document when below {@link #BIG}, else {@code BIG} and the frequency in
     * {@link #bigTfs}: a byte a posting rather than an int, and a namespace of 100k passages has some millions.
     */
    private final byte[] tfs;

    /** Where postings of a frequency of {@link #BIG} or more are (ascending), and their frequencies. */
    private final int[] bigAt;

    private final int[] bigTfs;

    private static final int BIG = 255;
    /** Per term, the most its saturated frequency reaches (see {@link Postings}). */
    private final double[] maxWeights;

    /** The per-document sums of {@link #top}. */
    private final Scratch scratch;

    /** Per document, {@code k1 · (1 − b + b · length / average length)}: the part of a term's weight that is the document's. */
    private final double[] lengthWeights;

    private final double k1;

    Bm25(List<String> documents, double k1, double b) {
        this(documents.size(), documents::get, null, new TermCache(), k1, b);
    }

    /**
     * BM25 over {@code n} documents.
     *
     * @param text the text of document {@code d}, asked only for documents whose counts the cache does not hold
     * @param key the object whose identity stands for document {@code d}'s text in {@code cache} (an immutable
     *     record or string the caller keeps from one index to the next), or null for none
     * @param cache the term counts of texts seen by earlier indexes built with it
     */
    Bm25(int n, IntFunction<String> text, IntFunction<Object> key, TermCache cache, double k1, double b) {
        this.k1 = k1;
        this.scratch = new Scratch(n);
        // Each document's distinct terms with their counts, from the cache or read once; then every term's postings
        // laid out in two arrays, a term's documents ascending.
        long[] counted = new long[n];
        int[] lengths = new int[n];
        long total = 0;
        int widest = 0;
        for (int d = 0; d < n; d++) {
            int at = d;
            counted[d] = cache.counted(key == null ? null : key.apply(d), () -> text.apply(at));
            lengths[d] = cache.length(counted[d]);
            total += lengths[d];
            widest = Math.max(widest, cache.distinct(counted[d]));
        }
        int[] df = new int[cache.size()];
        int[] termIds = new int[widest];
        int[] counts = new int[widest];
        for (long c : counted) {
            int distinct = cache.decode(c, termIds, counts);
            for (int i = 0; i < distinct; i++) {
                df[termIds[i]]++;
            }
        }
        // the used term ids in id order, each at its place among the index's terms
        int[] place = new int[df.length];
        List<String> used = new ArrayList<>();
        long postings = 0;
        for (int t = 0; t < df.length; t++) {
            place[t] = df[t] > 0 ? used.size() : -1;
            if (df[t] > 0) {
                used.add(cache.term(t));
                postings += df[t];
            }
        }
        if (postings > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("too many postings for one BM25 index: " + postings);
        }
        this.terms = List.copyOf(used);
        this.termIndex = new IdIndex(terms);
        this.offsets = new int[this.terms.size() + 1];
        for (int t = 0; t < df.length; t++) {
            if (place[t] >= 0) {
                offsets[place[t] + 1] = df[t];
            }
        }
        for (int i = 0; i < this.terms.size(); i++) {
            offsets[i + 1] += offsets[i];
        }
        this.docs = new int[(int) postings];
        this.tfs = new byte[(int) postings];
        long[] big = new long[16]; // position << 32 | frequency
        int bigCount = 0;
        int[] filled = Arrays.copyOf(offsets, this.terms.size());
        for (int d = 0; d < n; d++) { // in document order: each term's documents ascend
            int distinct = cache.decode(counted[d], termIds, counts);
            for (int i = 0; i < distinct; i++) {
                int at = filled[place[termIds[i]]]++;
                docs[at] = d;
                tfs[at] = (byte) Math.min(counts[i], BIG);
                if (counts[i] >= BIG) {
                    if (bigCount == big.length) {
                        big = Arrays.copyOf(big, bigCount * 2);
                    }
                    big[bigCount++] = (long) at << 32 | counts[i];
                }
            }
        }
        Arrays.sort(big, 0, bigCount);
        this.bigAt = new int[bigCount];
        this.bigTfs = new int[bigCount];
        for (int i = 0; i < bigCount; i++) {
            bigAt[i] = (int) (big[i] >>> 32);
            bigTfs[i] = (int) big[i];
        }
        double averageLength = n == 0 ? 0 : (double) total / n;
        this.lengthWeights = new double[n];
        for (int d = 0; d < n; d++) {
            lengthWeights[d] = k1 * (1 - b + b * lengths[d] / averageLength);
        }
        this.maxWeights = new double[this.terms.size()];
        for (int t = 0; t < maxWeights.length; t++) {
            double max = 0;
            for (int i = offsets[t]; i < offsets[t + 1]; i++) {
                double tf = tf(i);
                max = Math.max(max, tf * (k1 + 1) / (tf + lengthWeights[docs[i]]));
            }
            maxWeights[t] = max;
        }
    }

    /** The frequency of posting {@code i}'s term in its document. */
    private int tf(int i) {
        int t = tfs[i] & 0xFF;
        return t != BIG ? t : bigTfs[Arrays.binarySearch(bigAt, i)];
    }

    /** How many documents hold {@code term} (a lowercase token), 0 when none does. */
    int documentFrequency(String term) {
        int t = termIndex.indexOf(term);
        return t < 0 ? 0 : offsets[t + 1] - offsets[t];
    }

    /** How many distinct terms the index holds. */
    int termCount() {
        return terms.size();
    }

    /**
     * Term ids by the characters of a token, in an open-addressing table: no string is made for a token whose term is
     * known, which is most of them.
     */
    static final class Terms {
        private final List<String> terms = new ArrayList<>();
        private int[] slots = new int[1024]; // term id + 1, or 0 for an empty slot
        private int[] hashes = new int[1024];
        /** The term ids of the last document read, in text order: the first {@code length} of them. */
        int[] doc = new int[64];

        int length;

        /** Reads the tokens of a lowercased document into {@link #doc}. */
        void read(String lower) {
            length = 0;
            scan(lower, (start, end) -> {
                if (length == doc.length) {
                    doc = Arrays.copyOf(doc, length * 2);
                }
                doc[length++] = id(lower, start, end);
            });
        }

        int id(String text, int start, int end) {
            int h = 0;
            for (int i = start; i < end; i++) {
                h = 31 * h + text.charAt(i); // String.hashCode of the token
            }
            int mask = slots.length - 1;
            for (int at = mix(h) & mask; ; at = (at + 1) & mask) {
                int slot = slots[at];
                if (slot == 0) {
                    int id = terms.size();
                    terms.add(text.substring(start, end));
                    slots[at] = id + 1;
                    hashes[at] = h;
                    if (terms.size() * 2 > slots.length) {
                        grow();
                    }
                    return id;
                }
                String t = terms.get(slot - 1);
                if (hashes[at] == h && t.length() == end - start && text.regionMatches(start, t, 0, t.length())) {
                    return slot - 1;
                }
            }
        }

        private void grow() {
            int[] oldSlots = slots;
            int[] oldHashes = hashes;
            slots = new int[oldSlots.length * 2];
            hashes = new int[oldSlots.length * 2];
            int mask = slots.length - 1;
            for (int i = 0; i < oldSlots.length; i++) {
                if (oldSlots[i] != 0) {
                    int at = mix(oldHashes[i]) & mask;
                    while (slots[at] != 0) {
                        at = (at + 1) & mask;
                    }
                    slots[at] = oldSlots[i];
                    hashes[at] = oldHashes[i];
                }
            }
        }

        private static int mix(int h) {
            return h ^ (h >>> 16) ^ (h >>> 7);
        }

        List<String> terms() {
            return terms;
        }

        int size() {
            return terms.size();
        }

        /**
         * The distinct terms of a text (ids ascending), how often each occurs, and its length in tokens, packed
         * ({@link TermCache.Counted}).
         */
        byte[] count(String text) {
            read(text.toLowerCase(Locale.ROOT));
            Arrays.sort(doc, 0, length);
            return TermCache.Counted.pack(doc, length);
        }
    }

    /**
     * Lowercase runs of letters, digits and underscores ({@code [\p{L}\p{N}_]+} after lowercasing), scanned by code
     * point: the tokenizer runs over every passage of every snapshot, where a regular expression costs a fifth of
     * the build.
     */
    static List<String> tokens(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        List<String> out = new ArrayList<>();
        scan(lower, (start, end) -> out.add(lower.substring(start, end)));
        return out;
    }

    /**
     * The {@link String#hashCode} of each token of a text, in order, as {@link #tokens} reads them, without making a
     * string of any.
     */
    static int[] tokenHashes(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        int[][] out = {new int[16]};
        int[] n = {0};
        scan(lower, (start, end) -> {
            int h = 0;
            for (int i = start; i < end; i++) {
                h = 31 * h + lower.charAt(i);
            }
            if (n[0] == out[0].length) {
                out[0] = Arrays.copyOf(out[0], n[0] * 2);
            }
            out[0][n[0]++] = h;
        });
        return Arrays.copyOf(out[0], n[0]);
    }

    /** Where a token of a text starts and ends. */
    @FunctionalInterface
    private interface TokenBounds {
        void at(int start, int end);
    }

    /** The bounds of each token of a lowercased text, in order: the one tokenizer of documents and queries. */
    private static void scan(String lower, TokenBounds token) {
        int start = -1;
        for (int i = 0; i < lower.length(); ) {
            int cp = lower.codePointAt(i);
            if (wordChar(cp)) {
                if (start < 0) {
                    start = i;
                }
            } else if (start >= 0) {
                token.at(start, i);
                start = -1;
            }
            i += Character.charCount(cp);
        }
        if (start >= 0) {
            token.at(start, lower.length());
        }
    }

    private static boolean wordChar(int cp) {
        if (cp < 128) {
            return (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '_' || (cp >= 'A' && cp <= 'Z');
        }
        return switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER,
                    Character.LOWERCASE_LETTER,
                    Character.TITLECASE_LETTER,
                    Character.MODIFIER_LETTER,
                    Character.OTHER_LETTER,
                    Character.DECIMAL_DIGIT_NUMBER,
                    Character.LETTER_NUMBER,
                    Character.OTHER_NUMBER -> true;
            default -> false;
        };
    }

    /**
     * The {@code k} best documents for the query — those sharing a term with it, as {@link #scores} ranks them (score
     * descending, then index) and with the same scores — without a pass over every document, and mostly without
     * walking the postings of its commonest words.
     *
     * <p>Exact top-k with term upper bounds (the MaxScore idea): the question's terms are taken rarest first, summing
     * what each adds into a reused array; once {@code k} documents sum more than the most the terms not yet taken could
     * add to any document, no document outside those reached can enter the best {@code k}. Of the reached ones, only
     * those whose sum plus that most still reaches the {@code k}-th best sum can; they are scored exactly, each term
     * found by a search in its postings and added in the question's order, so that every score is the one {@link
     * #scores} gives, to the last bit. In a large namespace a question's "the" and "of" touch most of the hundreds of
     * thousands of unit names, and its rarer words settle the best few without walking those.
     */
    List<Retrieval.Scored> top(String query, int k) {
        return search(query, k).best();
    }

    /** What {@link #top} found, and how many postings it walked or looked up to find it (for tests). */
    record Search(List<Retrieval.Scored> best, long postingsVisited) {}

    Search search(String query, int k) {
        int n = lengthWeights.length;
        // the question's distinct terms in the order they first occur, with how often each occurs; then rarest first
        Map<Postings, Integer> times = asked(query);
        if (times.isEmpty() || k <= 0) {
            return new Search(List.of(), 0);
        }
        List<Postings> rarestFirst = new ArrayList<>(times.keySet());
        rarestFirst.sort((a, b) -> Integer.compare(a.size(), b.size()));
        double[] bounds = new double[rarestFirst.size()];
        double rest = 0;
        for (int i = 0; i < bounds.length; i++) {
            Postings p = rarestFirst.get(i);
            bounds[i] = times.get(p) * idf(p, n) * p.maxWeight();
            rest += bounds[i];
        }
        double[] sums = scratch.sums();
        // a document is reached once at most: an array of one per document, reused by the snapshot's queries
        Touched touched = new Touched(scratch.ints());
        long visited = 0;
        // 1. the rarest terms until the others cannot change the best k: sums here only bound the scores from below
        int taken = 0;
        while (taken < rarestFirst.size()) {
            Postings p = rarestFirst.get(taken);
            // a check costs a pass over the reached documents: worth it only before a term that costs more
            if (touched.size >= k && p.size() > touched.size && settled(sums, touched, k, rest)) {
                break;
            }
            double w = times.get(p) * idf(p, n);
            for (int i = p.from(); i < p.to(); i++) {
                int d = docs[i];
                if (sums[d] == 0) { // every term adds more than 0: a document's first
                    touched.add(d);
                }
                sums[d] += weight(w, tf(i), lengthWeights[d]);
            }
            visited += p.size();
            rest = 0; // summed again rather than subtracted: no rounding left over when every term is taken
            for (int i = ++taken; i < bounds.length; i++) {
                rest += bounds[i];
            }
        }
        // 2. the documents that can still be among the best k: those whose sum so far, plus the most the terms not
        // taken could add, reaches the k-th best sum so far; every other one scores below k documents
        double kth = touched.size <= k ? 0 : kthLargest(sums, touched, k);
        double bar = kth * (1 - 1e-9) - rest * (1 + 1e-9);
        int[] candidates = touched.docs; // kept in place: a document is written at or before where it was read
        int count = 0;
        for (int i = 0; i < touched.size; i++) {
            int d = touched.docs[i];
            if (sums[d] * (1 + 1e-9) >= bar) {
                candidates[count++] = d;
            }
            sums[d] = 0;
        }
        scratch.giveBack(sums);
        Arrays.sort(candidates, 0, count);
        // 3. those scored exactly, term by term in the question's order: the sums of scores(), to the last bit
        double[] exact = new double[count];
        for (Map.Entry<Postings, Integer> e : times.entrySet()) {
            Postings p = e.getKey();
            double w = e.getValue() * idf(p, n);
            int at = p.from();
            for (int c = 0; c < count && at < p.to(); c++) {
                at = seek(docs, at, p.to(), candidates[c]);
                if (at < p.to() && docs[at] == candidates[c]) {
                    exact[c] += weight(w, tf(at), lengthWeights[candidates[c]]);
                }
                visited++;
            }
        }
        VectorIndex.TopK best = new VectorIndex.TopK(Math.min(k, count));
        for (int c = 0; c < count; c++) {
            best.offer(candidates[c], exact[c]);
        }
        scratch.giveBack(candidates);
        return new Search(best.drain(), visited);
    }

    /** The {@code k}-th largest of the touched documents' sums ({@code k} at most their number). */
    private static double kthLargest(double[] sums, Touched touched, int k) {
        VectorIndex.TopK top = new VectorIndex.TopK(k);
        for (int i = 0; i < touched.size; i++) {
            top.offer(touched.docs[i], sums[touched.docs[i]]);
        }
        List<Retrieval.Scored> best = top.drain();
        return best.get(best.size() - 1).score();
    }

    private static double idf(Postings p, int n) {
        return Math.log(1 + (n - p.size() + 0.5) / (p.size() + 0.5));
    }

    /**
     * Whether no document outside {@code touched} can be among the best {@code k}: at least {@code k} reached documents
     * already sum more than {@code rest}, the most any other document can score. Both sides carry a margin far above
     * the rounding of a few additions, so the answer never depends on it.
     */
    private static boolean settled(double[] sums, Touched touched, int k, double rest) {
        double bar = rest * (1 + 1e-9) / (1 - 1e-9);
        int above = 0;
        for (int i = 0; i < touched.size && above < k; i++) {
            if (sums[touched.docs[i]] > bar) {
                above++;
            }
        }
        return above >= k;
    }

    /**
     * The first index at or after {@code from}, and before {@code to}, whose document is not below {@code d}, or {@code
     * to} (galloping, then binary).
     */
    private static int seek(int[] docs, int from, int to, int d) {
        int step = 1;
        int lo = from;
        int hi = from;
        while (hi < to && docs[hi] < d) {
            lo = hi + 1;
            hi += step;
            step <<= 1;
        }
        hi = Math.min(hi, to);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (docs[mid] < d) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The most bytes the arrays {@link #top} keeps may take. */
    long scratchBytes() {
        return scratch.maxBytes();
    }

    /**
     * BM25 score of every document for the query (0 for documents sharing no term): each distinct query term's weight
     * in each document, times how often the query has the term, summed in the order the terms first occur in it.
     */
    double[] scores(String query) {
        int n = lengthWeights.length;
        double[] out = new double[n];
        for (Map.Entry<Postings, Integer> e : asked(query).entrySet()) {
            Postings p = e.getKey();
            double w = e.getValue() * idf(p, n);
            for (int i = p.from(); i < p.to(); i++) {
                int d = docs[i];
                out[d] += weight(w, tf(i), lengthWeights[d]);
            }
        }
        return out;
    }

    /**
     * The query's terms that some document has, each once, in the order they first occur, with how often the query
     * has each: what a query costs is bounded by its distinct words, however often it repeats one.
     */
    private Map<Postings, Integer> asked(String query) {
        Map<Postings, Integer> times = new LinkedHashMap<>();
        Map<Integer, Postings> seen = new HashMap<>();
        for (String token : tokens(query)) {
            int t = termIndex.indexOf(token);
            if (t >= 0) {
                Postings p = seen.computeIfAbsent(t, x -> new Postings(x, offsets[x], offsets[x + 1], maxWeights[x]));
                times.merge(p, 1, Integer::sum);
            }
        }
        return times;
    }

    /** What a term of query weight {@code w} (its count times its idf) adds to a document: one expression for all. */
    private double weight(double w, double tf, double lengthWeight) {
        return w * tf * (k1 + 1) / (tf + lengthWeight);
    }

    /** The documents a query's terms reached, in the order they were first reached: at most one of each. */
    private static final class Touched {
        final int[] docs;
        int size;

        Touched(int[] docs) {
            this.docs = docs;
        }

        void add(int d) {
            docs[size++] = d;
        }
    }
}
