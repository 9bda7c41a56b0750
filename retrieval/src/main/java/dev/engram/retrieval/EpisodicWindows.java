package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
     * its similarity is the sum of theirs over the length of their sum, read from the passages' vectors as they are:
     * no window is kept between queries, and none is scored but those around the nearest passages, so that the layer
     * costs the same at any size of the namespace. Windows are laid over each passage's context as {@link #ranges}
     * lays them; ties by the first member.
     */
    static List<Window> nearest(MemoryGraph g, float[] query, List<Retrieval.Scored> around, int k) {
        Map<Integer, int[]> contexts = new HashMap<>(); // a context's passages in order, by its first
        Set<Long> seen = new HashSet<>();
        List<Window> scored = new ArrayList<>();
        float[] sum = new float[query.length];
        float[] v = new float[query.length];
        for (Retrieval.Scored s : around) {
            int first = s.passage();
            int place = 0;
            for (int steps = 0; g.previousInContext[first] >= 0 && steps < g.passageCount(); steps++) {
                first = g.previousInContext[first];
                place++;
            }
            int[] context = contexts.computeIfAbsent(first, f -> context(g, f));
            int n = context.length;
            int w = size(n);
            int stride = stride(w);
            // the windows start at 0, stride, 2·stride, …, the last being the first to reach the end
            int last = n <= w ? 0 : (n - w + stride - 1) / stride;
            for (int j = Math.max(0, (place - w + stride) / stride); j <= Math.min(last, place / stride); j++) {
                if (!seen.add(((long) first << 32) | j)) {
                    continue;
                }
                int from = j * stride;
                int[] members = Arrays.copyOfRange(context, from, Math.min(n, from + w));
                scored.add(new Window(members, score(g, query, members, sum, v)));
            }
        }
        scored.sort(Comparator.comparingDouble(Window::score).reversed().thenComparingInt(x -> x.members()[0]));
        return scored.size() > k ? List.copyOf(scored.subList(0, k)) : scored;
    }

    /** The passages of the context that starts at {@code first}, in order. */
    private static int[] context(MemoryGraph g, int first) {
        int n = 1;
        for (int p = g.nextInContext[first]; p >= 0 && n < g.passageCount(); p = g.nextInContext[p]) {
            n++;
        }
        int[] out = new int[n];
        int p = first;
        for (int i = 0; i < n; i++) {
            out[i] = p;
            p = g.nextInContext[p];
        }
        return out;
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
