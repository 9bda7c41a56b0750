package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Okapi BM25 over lowercase word tokens, with an inverted index. */
final class Bm25 {

    /**
     * The documents of a term, ascending, and the term's frequency in each: two flat arrays, which a query walks
     * without following a reference per document.
     */
    private record Postings(int[] docs, int[] tfs) {}

    private final Map<String, Postings> postings;
    /** The per-document sums of {@link #top}. */
    private final Scratch scratch;

    /** Per document, {@code k1 · (1 − b + b · length / average length)}: the part of a term's weight that is the document's. */
    private final double[] lengthWeights;

    private final double k1;

    Bm25(List<String> documents, double k1, double b) {
        this.k1 = k1;
        int n = documents.size();
        int[] lengths = new int[n];
        this.scratch = new Scratch(n);
        // One pass numbers the terms and keeps each document's distinct terms with their counts, flat; a second lays
        // out each term's postings in one array of its exact size. Every token costs one lookup of its term.
        Map<String, Integer> ids = new HashMap<>();
        List<String> terms = new ArrayList<>();
        int[] df = new int[256];
        int[] pairTerms = new int[1024];
        int[] pairCounts = new int[1024];
        int pairs = 0;
        int[] firstPair = new int[n + 1];
        int[] doc = new int[64];
        long total = 0;
        for (int d = 0; d < n; d++) {
            int len = 0;
            for (String t : tokens(documents.get(d))) {
                Integer id = ids.get(t);
                if (id == null) {
                    id = terms.size();
                    ids.put(t, id);
                    terms.add(t);
                }
                if (len == doc.length) {
                    doc = Arrays.copyOf(doc, len * 2);
                }
                doc[len++] = id;
            }
            lengths[d] = len;
            total += len;
            Arrays.sort(doc, 0, len);
            if (pairs + len > pairTerms.length) {
                int size = Math.max(pairTerms.length * 2, pairs + len);
                pairTerms = Arrays.copyOf(pairTerms, size);
                pairCounts = Arrays.copyOf(pairCounts, size);
            }
            for (int i = 0; i < len; ) {
                int j = i;
                while (j < len && doc[j] == doc[i]) {
                    j++;
                }
                if (doc[i] >= df.length) {
                    df = Arrays.copyOf(df, Math.max(df.length * 2, doc[i] + 1));
                }
                df[doc[i]]++;
                pairTerms[pairs] = doc[i];
                pairCounts[pairs++] = j - i;
                i = j;
            }
            firstPair[d + 1] = pairs;
        }
        int[][] docs = new int[terms.size()][];
        int[][] tfs = new int[terms.size()][];
        for (int t = 0; t < docs.length; t++) {
            docs[t] = new int[df[t]];
            tfs[t] = new int[df[t]];
        }
        int[] filled = new int[terms.size()];
        for (int d = 0; d < n; d++) { // in document order: each term's documents ascend
            for (int i = firstPair[d]; i < firstPair[d + 1]; i++) {
                int t = pairTerms[i];
                docs[t][filled[t]] = d;
                tfs[t][filled[t]++] = pairCounts[i];
            }
        }
        double averageLength = n == 0 ? 0 : (double) total / n;
        this.lengthWeights = new double[n];
        for (int d = 0; d < n; d++) {
            lengthWeights[d] = k1 * (1 - b + b * lengths[d] / averageLength);
        }
        this.postings = HashMap.newHashMap(terms.size());
        for (int t = 0; t < docs.length; t++) {
            postings.put(terms.get(t), new Postings(docs[t], tfs[t]));
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
        int start = -1;
        for (int i = 0; i < lower.length(); ) {
            int cp = lower.codePointAt(i);
            if (wordChar(cp)) {
                if (start < 0) {
                    start = i;
                }
            } else if (start >= 0) {
                out.add(lower.substring(start, i));
                start = -1;
            }
            i += Character.charCount(cp);
        }
        if (start >= 0) {
            out.add(lower.substring(start));
        }
        return out;
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
     * descending, then index) and with the same scores — without a pass over every document: the sums go to a reused
     * array, and only the documents they touched are ranked and cleared. The names of every unit of a large namespace
     * number in the hundreds of thousands, of which a question touches a few.
     */
    List<Retrieval.Scored> top(String query, int k) {
        double[] sums = scratch.sums();
        Touched touched = new Touched();
        sum(query, sums, touched);
        VectorIndex.TopK best = new VectorIndex.TopK(Math.min(k, touched.size));
        for (int i = 0; i < touched.size; i++) {
            int d = touched.docs[i];
            best.offer(d, sums[d]);
            sums[d] = 0;
        }
        scratch.giveBack(sums);
        return best.drain();
    }

    /** The most bytes the arrays {@link #top} keeps may take. */
    long scratchBytes() {
        return scratch.maxBytes();
    }

    /** BM25 score of every document for the query (0 for documents sharing no term). */
    double[] scores(String query) {
        double[] out = new double[lengthWeights.length];
        sum(query, out, null);
        return out;
    }

    /** The documents a query's terms reached, in the order they were first reached. */
    private static final class Touched {
        int[] docs = new int[64];
        int size;

        void add(int d) {
            if (size == docs.length) {
                docs = Arrays.copyOf(docs, size * 2);
            }
            docs[size++] = d;
        }
    }

    /**
     * Adds each query term's weight in each document to {@code sums}, term by term in the query's order (a repeated
     * term counts again); the documents first reached go to {@code touched} when given ({@code sums} all zero then).
     */
    private void sum(String query, double[] sums, Touched touched) {
        int n = lengthWeights.length;
        for (String t : tokens(query)) {
            Postings p = postings.get(t);
            if (p == null) {
                continue;
            }
            int[] docs = p.docs();
            int[] tfs = p.tfs();
            double idf = Math.log(1 + (n - docs.length + 0.5) / (docs.length + 0.5));
            for (int i = 0; i < docs.length; i++) {
                int d = docs[i];
                double tf = tfs[i];
                if (touched != null && sums[d] == 0) { // every term adds more than 0: a document's first
                    touched.add(d);
                }
                sums[d] += idf * tf * (k1 + 1) / (tf + lengthWeights[d]);
            }
        }
    }
}
