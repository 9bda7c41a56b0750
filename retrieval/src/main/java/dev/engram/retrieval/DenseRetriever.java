package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/** Exact cosine top-k over unit-length passage vectors. */
public final class DenseRetriever {

    private DenseRetriever() {}

    public static List<ScoredPassage> topK(MemoryView view, float[] query, int k) {
        if (k <= 0) {
            throw new IllegalArgumentException("k must be positive");
        }
        PriorityQueue<ScoredPassage> heap = new PriorityQueue<>(
                k + 1,
                Comparator.comparingDouble(ScoredPassage::score)
                        .thenComparing(ScoredPassage::passageId, Comparator.reverseOrder()));
        view.forEachPassageVector((id, vector) -> {
            if (vector.length != query.length) {
                throw new IllegalStateException("passage " + id + " has " + vector.length
                        + " dimensions but the query has " + query.length + "; re-embed the namespace");
            }
            heap.add(new ScoredPassage(id, dot(query, vector)));
            if (heap.size() > k) {
                heap.poll();
            }
        });
        List<ScoredPassage> out = new ArrayList<>(heap);
        out.sort(Comparator.comparingDouble(ScoredPassage::score).reversed().thenComparing(ScoredPassage::passageId));
        return out;
    }

    static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
