package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * ComoRAG's episodic layer (§B.1): sliding windows over the passages of a context in reading order — a document's
 * passages by offset, a conversation session's turns by time ({@link ContextNeighbours}).
 */
public final class EpisodicWindows {

    private EpisodicWindows() {}

    /** §B.1: 3, 5, 8 or 10 passages for documents of up to 20, 50, 100 or 200; beyond, min(20, max(10, ⌊2·log2 N⌋)). */
    public static int size(int n) {
        if (n <= 20) {
            return 3;
        } else if (n <= 50) {
            return 5;
        } else if (n <= 100) {
            return 8;
        } else if (n <= 200) {
            return 10;
        }
        return Math.min(20, Math.max(10, (int) Math.floor(Math.log(n) / Math.log(2) * 2)));
    }

    /** Windows overlap by half their size. */
    public static int stride(int size) {
        return Math.max(1, size / 2);
    }

    /** The [from, to) ranges of the windows over n passages. */
    public static List<int[]> ranges(int n) {
        List<int[]> out = new ArrayList<>();
        int w = size(n);
        for (int from = 0; from < n; from += stride(w)) {
            out.add(new int[] {from, Math.min(n, from + w)});
            if (from + w >= n) {
                break;
            }
        }
        return out;
    }

    /** A window of passages in reading order, and its similarity to a query. */
    record Window(int[] members, double score) {}

    /**
     * The {@code k} windows most similar to {@code query} among those that hold one of the passages {@code around}
     * (the query's nearest by meaning). A window's vector is the normalized mean of its passages' (unit) vectors, so
     * its similarity is the sum of theirs over the length of their sum, read from the passages' vectors as they are.
     * No window is kept between queries, and none is scored but those around the nearest passages, each found from
     * its passage's place in its context: the layer costs the same at any size of the namespace or of a context.
     * Windows are laid over each context as {@link #ranges} lays them; ties by the first member.
     */
    static List<Window> nearest(MemoryGraph g, float[] query, List<Retrieval.Scored> around, int k) {
        Set<Integer> seen = new HashSet<>(); // windows by their first passage: one context's windows start apart
        List<Window> scored = new ArrayList<>();
        float[] sum = new float[query.length];
        float[] v = new float[query.length];
        for (Retrieval.Scored s : around) {
            int p = s.passage();
            int place = g.placeInContext[p];
            int n = g.contextSize[p];
            int w = size(n);
            int stride = stride(w);
            // the windows start at 0, stride, 2·stride, …, the last being the first to reach the end
            int last = n <= w ? 0 : (n - w + stride - 1) / stride;
            for (int j = Math.max(0, (place - w + stride) / stride); j <= Math.min(last, place / stride); j++) {
                int from = j * stride;
                int first = p;
                for (int back = place - from; back > 0; back--) {
                    first = g.previousInContext[first];
                }
                if (!seen.add(first)) {
                    continue;
                }
                int[] members = new int[Math.min(n, from + w) - from];
                members[0] = first;
                for (int i = 1; i < members.length; i++) {
                    members[i] = g.nextInContext[members[i - 1]];
                }
                scored.add(new Window(members, score(g, query, members, sum, v)));
            }
        }
        scored.sort(Comparator.comparingDouble(Window::score).reversed().thenComparingInt(x -> x.members()[0]));
        return scored.size() > k ? List.copyOf(scored.subList(0, k)) : scored;
    }

    /** Cosine of the query with the normalized mean of the members' vectors (0 when they have none). */
    private static double score(MemoryGraph g, float[] query, int[] members, float[] sum, float[] v) {
        Arrays.fill(sum, 0);
        double dot = 0;
        for (int m : members) {
            if (g.passageVectors.length(m) != sum.length) {
                continue; // no vector, or another model's: not comparable
            }
            g.passageVectors.read(m, v);
            for (int i = 0; i < sum.length; i++) {
                sum[i] += v[i];
            }
            dot += Retrieval.dot(query, v);
        }
        double norm = Math.sqrt(Retrieval.dot(sum, sum));
        return norm == 0 ? 0 : dot / norm;
    }
}
