package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The texts of a snapshot's facts or relations, by index: each one a string of a list packed in the namespace's arena
 * ({@link PackedStrings}, a passage's facts and relations in one list), or a string on the heap. Read back when asked
 * for: a query reads the few it explains, and a build only those new to its BM25 index of names. About 12 bytes a text
 * on the heap, where a string took about a hundred, and a namespace of 100k passages has some 700,000 of them.
 */
final class UnitTexts {

    private final VectorArena arena;
    /** Per text, the handle of its packed list in {@link #arena}, or {@link VectorArena#NONE} when on the heap. */
    private final long[] handles;
    /** Per text, its place in its packed list, or in {@link #onHeap}. */
    private final int[] places;

    private final String[] onHeap;

    private UnitTexts(VectorArena arena, long[] handles, int[] places, String[] onHeap) {
        this.arena = arena;
        this.handles = handles;
        this.places = places;
        this.onHeap = onHeap;
    }

    int size() {
        return handles.length;
    }

    /** The text at {@code i}. */
    String get(int i) {
        long h = handles[i];
        return h == VectorArena.NONE ? onHeap[places[i]] : PackedStrings.get(arena.bytes(h), places[i]);
    }

    /** The heap the texts take here. */
    long heapBytes() {
        long bytes = 48 + 12L * handles.length;
        for (String s : onHeap) {
            bytes += 48 + s.length();
        }
        return bytes;
    }

    /**
     * Texts as a builder is given them, each with the object that stands for it in a namespace's {@link TermCache} (the
     * string itself for one on the heap): kept by the builder only, never by the snapshot.
     */
    static final class Builder {
        private long[] handles = new long[16];
        private int[] places = new int[16];
        private final List<String> onHeap = new ArrayList<>();
        private final List<Object> keys = new ArrayList<>();

        /** Adds a text kept on the heap. */
        void add(String text) {
            grow();
            handles[keys.size()] = VectorArena.NONE;
            places[keys.size()] = onHeap.size();
            onHeap.add(text);
            keys.add(text);
        }

        /** Adds the string at {@code place} of the list packed as {@code handle} in the builder's arena. */
        void add(long handle, int place, Object key) {
            if (handle == VectorArena.NONE || place < 0) {
                throw new IllegalArgumentException("no packed text at " + handle + ", " + place);
            }
            grow();
            handles[keys.size()] = handle;
            places[keys.size()] = place;
            keys.add(key);
        }

        int size() {
            return keys.size();
        }

        /** What stands for text {@code i} in a term cache. */
        Object key(int i) {
            return keys.get(i);
        }

        UnitTexts build(VectorArena arena) {
            int n = keys.size();
            return new UnitTexts(
                    arena, Arrays.copyOf(handles, n), Arrays.copyOf(places, n), onHeap.toArray(String[]::new));
        }

        private void grow() {
            if (keys.size() == handles.length) {
                handles = Arrays.copyOf(handles, handles.length * 2);
                places = Arrays.copyOf(places, places.length * 2);
            }
        }
    }
}
