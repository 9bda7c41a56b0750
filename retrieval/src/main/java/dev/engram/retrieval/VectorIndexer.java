package dev.engram.retrieval;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Makes the {@link VectorIndex}es of a snapshot from its keyed vectors, one batch per kind of vector. */
public interface VectorIndexer {

    /**
     * The vectors of one kind in a snapshot: {@code keys[i]} names {@code vectors[i]} stably across snapshots (a
     * passage id, say); a null vector is left out. A vector's array is never changed once passed: an indexer may tell
     * an unchanged vector by its array alone, and a changed one comes in a new array.
     */
    record Batch(String kind, List<String> keys, float[][] vectors) {
        public Batch {
            if (keys.size() != vectors.length) {
                throw new IllegalArgumentException("a key per vector: " + keys.size() + " keys, " + vectors.length);
            }
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
