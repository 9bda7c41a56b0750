package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A ranking with near-copies moved down: a passage whose words largely repeat those of a passage ranked above it
 * (their runs of three words alike by at least {@code threshold}, Jaccard) waits until every other candidate has had
 * its place. Technical documentation repeats itself: the "Configuring clients" sections of several authentication
 * mechanisms say nearly the same words, and a question about one of them finds them all before the section that
 * answers it; a corpus may hold one paragraph twice under two titles. The first of a run of near-copies keeps its
 * place; the others fill the ranking only when nothing else is left. Words, not vectors, decide: two short turns of
 * a conversation about one thing are alike in meaning (and may both answer), not copies of each other.
 */
final class NearDuplicates {

    /**
     * The default likeness past which a passage is a near-copy, in every mode but the two baselines: chosen
     * leave-one-set-out over the five dev sets among off, 0.3, 0.5 and 0.7 (docs/evaluation.md#near-copies).
     */
    static final double THRESHOLD = 0.5;

    /**
     * Two passages less alike in meaning than this (the cosine of their vectors) are not compared by their words: a
     * text that repeats half the runs of three words of another is far more alike than this, and reading the texts of
     * every candidate would cost a request more than the rest of the step.
     */
    static final double ALIKE_IN_MEANING = 0.7;

    private NearDuplicates() {}

    /** What {@link #spread} did: the ranking, and how many near copies it moved below the other candidates. */
    record Spread(List<Retrieval.Scored> ranked, int movedDown) {}

    /**
     * The first {@code topK} of {@code ranked} (best first) with near-copies of better-ranked passages after every
     * other candidate. A passage keeps the score the ranking gave it, so scores no longer descend where one moved.
     * {@code threshold} 0 leaves the ranking as it is.
     */
    static Spread spread(MemoryGraph g, List<Retrieval.Scored> ranked, double threshold, int topK) {
        if (threshold <= 0 || ranked.size() <= 1) {
            return new Spread(ranked.size() > topK ? List.copyOf(ranked.subList(0, topK)) : ranked, 0);
        }
        List<Retrieval.Scored> kept = new ArrayList<>(Math.min(topK, ranked.size()));
        List<float[]> keptVectors = new ArrayList<>();
        List<long[]> keptShingles = new ArrayList<>(); // read when first compared
        List<Retrieval.Scored> later = new ArrayList<>();
        for (Retrieval.Scored s : ranked) {
            if (kept.size() == topK) {
                break;
            }
            long[] shingles = null;
            boolean copy = false;
            for (int i = 0; i < kept.size() && !copy; i++) {
                // a snapshot's vectors are of unit length: their inner product is their cosine
                if (g.passageVectors.dot(s.passage(), keptVectors.get(i)) < ALIKE_IN_MEANING) {
                    continue; // texts that share half their words are alike in meaning: no need to read them
                }
                if (shingles == null) {
                    shingles = shingles(g.passage(s.passage()).text());
                }
                if (keptShingles.get(i) == null) {
                    keptShingles.set(
                            i, shingles(g.passage(kept.get(i).passage()).text()));
                }
                copy = resemblance(shingles, keptShingles.get(i)) >= threshold;
            }
            if (copy) {
                later.add(s);
            } else {
                kept.add(s);
                keptVectors.add(g.passageVectors.get(s.passage()));
                keptShingles.add(shingles);
            }
        }
        for (Retrieval.Scored s : later) {
            if (kept.size() == topK) {
                break;
            }
            kept.add(s);
        }
        return new Spread(kept, later.size());
    }

    /**
     * The distinct runs of three words of a text (words as BM25 reads them), hashed, ascending; a text of fewer words
     * is one run of all of them (none when it has no word).
     */
    static long[] shingles(String text) {
        int[] w = Bm25.tokenHashes(text == null ? "" : text);
        if (w.length < 3) {
            long h = 0;
            for (int x : w) {
                h = mixed(h, x);
            }
            return w.length == 0 ? new long[0] : new long[] {h};
        }
        long[] out = new long[w.length - 2];
        for (int i = 0; i + 2 < w.length; i++) {
            out[i] = mixed(mixed(mixed(0, w[i]), w[i + 1]), w[i + 2]);
        }
        Arrays.sort(out);
        int n = 0;
        for (int i = 0; i < out.length; i++) {
            if (n == 0 || out[i] != out[n - 1]) {
                out[n++] = out[i];
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** {@code h} with one more word's hash folded in (splitmix64's finalizer over both). */
    private static long mixed(long h, int word) {
        long z = (h ^ (word & 0xFFFFFFFFL)) * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The Jaccard resemblance of two sorted sets of shingles (0 when both are empty). */
    static double resemblance(long[] a, long[] b) {
        int i = 0;
        int j = 0;
        int both = 0;
        while (i < a.length && j < b.length) {
            if (a[i] == b[j]) {
                both++;
                i++;
                j++;
            } else if (a[i] < b[j]) {
                i++;
            } else {
                j++;
            }
        }
        int either = a.length + b.length - both;
        return either == 0 ? 0 : (double) both / either;
    }
}
