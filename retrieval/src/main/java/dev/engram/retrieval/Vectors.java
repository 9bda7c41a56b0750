package dev.engram.retrieval;

import java.util.function.IntPredicate;

/**
 * One kind of vector of a snapshot, by position (passages, facts, entities, utility questions): handles into the
 * namespace's {@link VectorArena}, so a snapshot holds 8 bytes per vector on the heap rather than its values. A
 * position without a vector holds {@link VectorArena#NONE}.
 */
public final class Vectors {

    /** Per thread, the buffer {@link #dot} reads a vector into (the dot product wants arrays of one length). */
    private static final ThreadLocal<float[]> SCRATCH = ThreadLocal.withInitial(() -> new float[0]);

    private final VectorArena arena;
    private final long[] handles;

    public Vectors(VectorArena arena, long[] handles) {
        this.arena = arena;
        this.handles = handles;
    }

    /** The vectors in a new arena on the heap, copied (a null stays absent). */
    public static Vectors of(float[]... vectors) {
        VectorArena arena = VectorArena.onHeap();
        long[] handles = new long[vectors.length];
        for (int i = 0; i < vectors.length; i++) {
            handles[i] = arena.add(vectors[i]);
        }
        return new Vectors(arena, handles);
    }

    public int size() {
        return handles.length;
    }

    /** Whether position {@code i} has a vector. */
    public boolean has(int i) {
        return handles[i] != VectorArena.NONE;
    }

    /** A copy of the vector at {@code i}, or null. */
    public float[] get(int i) {
        return arena.get(handles[i]);
    }

    /** How many values the vector at {@code i} has (0: none). */
    public int length(int i) {
        return VectorArena.length(handles[i]);
    }

    /** Reads the vector at {@code i} into the start of {@code into}, which is at least {@link #length} long. */
    public void read(int i, float[] into) {
        arena.read(handles[i], into);
    }

    /**
     * The inner product of {@code query} with the vector at {@code i} (0 when it has none), read into a buffer of the
     * calling thread's rather than a new array.
     */
    public double dot(int i, float[] query) {
        if (!has(i)) {
            return 0;
        }
        int length = length(i);
        float[] v = SCRATCH.get();
        if (v.length != length) {
            v = new float[length];
            SCRATCH.set(v);
        }
        arena.read(handles[i], v);
        return Retrieval.dot(query, v);
    }

    /** The handle at {@code i} in {@link #arena()}. */
    public long handle(int i) {
        return handles[i];
    }

    public VectorArena arena() {
        return arena;
    }

    /** The same vectors with only the positions {@code keep} accepts; the others absent. */
    public Vectors only(IntPredicate keep) {
        long[] out = handles.clone();
        for (int i = 0; i < out.length; i++) {
            if (!keep.test(i)) {
                out[i] = VectorArena.NONE;
            }
        }
        return new Vectors(arena, out);
    }

    /** Heap this table holds: its handles. */
    public long heapBytes() {
        return 16 + 8L * handles.length;
    }
}
