package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Okapi BM25 over lowercase word tokens, with an inverted index. */
final class Bm25 {

    private final Map<String, int[][]> postings; // term -> [doc, tf] pairs
    /** The per-document sums of {@link #top}. */
    private final Scratch scratch;

    private final int[] lengths;
    private final double averageLength;
    private final double k1;
    private final double b;

    Bm25(List<String> documents, double k1, double b) {
        this.k1 = k1;
        this.b = b;
        this.lengths = new int[documents.size()];
        this.scratch = new Scratch(documents.size());
        Map<String, List<int[]>> building = new HashMap<>();
        long total = 0;
        for (int d = 0; d < documents.size(); d++) {
            Map<String, Integer> tf = new HashMap<>();
            for (String t : tokens(documents.get(d))) {
                tf.merge(t, 1, Integer::sum);
                lengths[d]++;
            }
            total += lengths[d];
            for (Map.Entry<String, Integer> e : tf.entrySet()) {
                building.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(new int[] {d, e.getValue()});
            }
        }
        this.averageLength = documents.isEmpty() ? 0 : (double) total / documents.size();
        this.postings = new HashMap<>();
        building.forEach((k, v) -> postings.put(k, v.toArray(new int[0][])));
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
        int[] touched = new int[64];
        int size = 0;
        int n = lengths.length;
        for (String t : tokens(query)) {
            int[][] p = postings.get(t);
            if (p == null) {
                continue;
            }
            double idf = Math.log(1 + (n - p.length + 0.5) / (p.length + 0.5));
            for (int[] dt : p) {
                double tf = dt[1];
                double norm = tf + k1 * (1 - b + b * lengths[dt[0]] / averageLength);
                if (sums[dt[0]] == 0) { // every term adds more than 0: a document's first
                    if (size == touched.length) {
                        touched = Arrays.copyOf(touched, size * 2);
                    }
                    touched[size++] = dt[0];
                }
                sums[dt[0]] += idf * tf * (k1 + 1) / norm;
            }
        }
        VectorIndex.TopK best = new VectorIndex.TopK(Math.min(k, size));
        for (int i = 0; i < size; i++) {
            best.offer(touched[i], sums[touched[i]]);
            sums[touched[i]] = 0;
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
        double[] out = new double[lengths.length];
        int n = lengths.length;
        for (String t : tokens(query)) {
            int[][] p = postings.get(t);
            if (p == null) {
                continue;
            }
            double idf = Math.log(1 + (n - p.length + 0.5) / (p.length + 0.5));
            for (int[] dt : p) {
                double tf = dt[1];
                double norm = tf + k1 * (1 - b + b * lengths[dt[0]] / averageLength);
                out[dt[0]] += idf * tf * (k1 + 1) / norm;
            }
        }
        return out;
    }
}
