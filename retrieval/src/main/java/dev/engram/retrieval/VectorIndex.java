package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;

/**
 * Nearest-neighbour search over one kind of vector of a snapshot (passages, facts, entities, utility questions).
 * Vectors are unit length, so the inner product is the cosine. Positions are indices into the snapshot's arrays;
 * a null vector is never found.
 */
public interface VectorIndex {

    /** The {@code k} nearest vectors to {@code query}, best first, scored by their exact inner product. */
    List<Retrieval.Scored> nearest(float[] query, int k);

    /** The {@code k} nearest vectors to each of {@code queries}, in their order; each as {@link #nearest} finds it. */
    default List<List<Retrieval.Scored>> nearestEach(List<float[]> queries, int k) {
        List<List<Retrieval.Scored>> out = new ArrayList<>();
        for (float[] q : queries) {
            out.add(nearest(q, k));
        }
        return out;
    }

    /**
     * Up to which {@code k} the {@code k'} nearest found by one search are exactly the head of a search for more:
     * every {@code k} for a scan; for a graph search, as far as a search gathers the same candidates whatever it is
     * asked for.
     */
    default int headsAgreeUpTo() {
        return Integer.MAX_VALUE;
    }

    /** "exact" (a scan of every vector) or "hnsw" (an approximate graph search). */
    String kind();

    /** A full scan: exact, and the fastest choice below some thousands of vectors. */
    static VectorIndex exact(float[][] vectors) {
        return new Exact(Vectors.of(vectors));
    }

    /** A full scan of a snapshot's vectors. */
    static VectorIndex exact(Vectors vectors) {
        return new Exact(vectors);
    }

    /** Scans every vector; keeps the best {@code k} in a bounded heap. */
    final class Exact implements VectorIndex {
        private final Vectors vectors;

        /**
         * Positions whose vector has a non-finite value (a broken embedding), never found: marked by the first search
         * as it reads them, not when the index is made — a snapshot is made every second or so while its namespace is
         * written, and most of its kinds are never searched exactly before the next.
         */
        private volatile boolean[] broken;

        Exact(Vectors vectors) {
            this.vectors = vectors;
        }

        private static boolean finite(float[] v) {
            for (float x : v) {
                if (!Float.isFinite(x)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String kind() {
            return "exact";
        }

        @Override
        public List<Retrieval.Scored> nearest(float[] query, int k) {
            return nearestEach(List.of(query), k).get(0);
        }

        /** One pass over the vectors for all the queries: each vector is read from memory once, not once per query. */
        @Override
        public List<List<Retrieval.Scored>> nearestEach(List<float[]> queries, int k) {
            float[][] qs = queries.toArray(float[][]::new);
            TopK[] tops = new TopK[qs.length];
            for (int j = 0; j < qs.length; j++) {
                tops[j] = new TopK(Math.min(k, vectors.size()));
            }
            boolean[] known = broken;
            boolean[] marked = known != null ? known : new boolean[vectors.size()];
            float[] v = null;
            for (int i = 0; i < vectors.size(); i++) {
                int length = vectors.length(i);
                if (!vectors.has(i) || marked[i]) {
                    continue;
                }
                if (v == null || v.length != length) {
                    v = new float[length];
                }
                vectors.read(i, v);
                if (known == null && !finite(v)) {
                    marked[i] = true;
                    continue;
                }
                for (int j = 0; j < qs.length; j++) {
                    if (v.length != qs[j].length) {
                        throw new IllegalStateException("a stored vector has " + v.length
                                + " dimensions but the query has " + qs[j].length + "; re-embed the namespace");
                    }
                    tops[j].offer(i, Retrieval.dot(qs[j], v));
                }
            }
            broken = marked; // searches at once may each mark them: the same marks
            List<List<Retrieval.Scored>> out = new ArrayList<>();
            for (TopK top : tops) {
                out.add(top.drain());
            }
            return out;
        }
    }

    /** The best {@code k} (index, score) pairs offered, ties broken by the smaller index. */
    final class TopK {
        private final int k;
        private final int[] ids;
        private final double[] scores;
        private int size;

        /** @param k at most how many to keep; callers bound it by the number of candidates */
        TopK(int k) {
            this.k = Math.max(0, k);
            this.ids = new int[this.k];
            this.scores = new double[this.k];
        }

        /** Whether (a, sa) ranks below (b, sb). */
        private static boolean worse(double sa, int a, double sb, int b) {
            int c = Double.compare(sa, sb);
            return c < 0 || (c == 0 && a > b);
        }

        void offer(int id, double score) {
            if (k == 0) {
                return;
            }
            if (size < k) {
                ids[size] = id;
                scores[size] = score;
                siftUp(size++);
            } else if (worse(scores[0], ids[0], score, id)) {
                ids[0] = id;
                scores[0] = score;
                siftDown(0);
            }
        }

        private void siftUp(int i) {
            while (i > 0) {
                int parent = (i - 1) / 2;
                if (!worse(scores[i], ids[i], scores[parent], ids[parent])) {
                    return;
                }
                swap(i, parent);
                i = parent;
            }
        }

        private void siftDown(int i) {
            while (true) {
                int l = 2 * i + 1;
                int r = l + 1;
                int least = i;
                if (l < size && worse(scores[l], ids[l], scores[least], ids[least])) {
                    least = l;
                }
                if (r < size && worse(scores[r], ids[r], scores[least], ids[least])) {
                    least = r;
                }
                if (least == i) {
                    return;
                }
                swap(i, least);
                i = least;
            }
        }

        private void swap(int a, int b) {
            int t = ids[a];
            ids[a] = ids[b];
            ids[b] = t;
            double s = scores[a];
            scores[a] = scores[b];
            scores[b] = s;
        }

        /** The kept pairs, best first; empties the heap. */
        List<Retrieval.Scored> drain() {
            Retrieval.Scored[] out = new Retrieval.Scored[size];
            for (int i = size - 1; i >= 0; i--) {
                out[i] = new Retrieval.Scored(ids[0], scores[0]);
                ids[0] = ids[size - 1];
                scores[0] = scores[size - 1];
                size--;
                siftDown(0);
            }
            return new ArrayList<>(List.of(out));
        }
    }
}
