package dev.engram.retrieval;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/** Makes the {@link VectorIndex}es of a snapshot from its keyed vectors, one batch per kind of vector. */
public interface VectorIndexer {

    /**
     * The vectors of one kind in a snapshot: {@code keys[i]} names vector {@code i} stably across snapshots (a passage
     * id, say); an absent vector is left out. A vector in an arena is never changed once added: an indexer may tell an
     * unchanged vector by its arena and handle alone, and a changed one comes with a new handle. {@code locate} gives
     * the position of a key (-1: none) without a map of a snapshot's keys, which would cost some tens of bytes of heap
     * per vector; null: a search makes such a map.
     */
    record Batch(String kind, List<String> keys, Vectors vectors, ToIntFunction<String> locate) {
        public Batch {
            if (keys.size() != vectors.size()) {
                throw new IllegalArgumentException("a key per vector: " + keys.size() + " keys, " + vectors.size());
            }
        }

        /** A batch whose keys are found by a map of them, made by each search that needs it. */
        public Batch(String kind, List<String> keys, Vectors vectors) {
            this(kind, keys, vectors, null);
        }

        /** A batch of vectors given by value, copied into an arena on the heap. */
        public Batch(String kind, List<String> keys, float[][] vectors) {
            this(kind, keys, Vectors.of(vectors));
        }

        /** A batch is itself only: comparing (and hashing) its keys would read all of them at every map lookup. */
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    /** A snapshot's indexes by kind, and what to call when the snapshot is no longer served. */
    record Indexed(Map<String, VectorIndex> byKind, Runnable release) {}

    Indexed index(List<Batch> batches);

    /** Exact search for every kind. */
    VectorIndexer EXACT = batches -> {
        Map<String, VectorIndex> out = new LinkedHashMap<>();
        batches.forEach(b -> out.put(b.kind(), VectorIndex.exact(b.vectors())));
        return new Indexed(out, () -> {});
    };
}
