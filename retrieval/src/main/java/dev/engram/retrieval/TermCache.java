package dev.engram.retrieval;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ObjLongConsumer;
import java.util.function.Supplier;

/**
 * The term counts of the texts a namespace's BM25 indexes were built over, kept from one snapshot to the next: a text
 * whose counts are held is not read again. Texts are known by the identity of an immutable object that stands for
 * them (a passage's text key, a name string), which the snapshot's builder keeps for as long as the text does not change;
 * an object not seen before has its text read. What one build did not use is forgotten by the next.
 *
 * <p>Term ids are this cache's: they grow with every term ever read, so once they number far more than the terms the
 * last build used (texts changed or left), the cache starts afresh. Not thread-safe: a namespace's snapshots are built
 * one at a time.
 */
public final class TermCache {

    /**
     * A text's distinct terms (ids ascending), how often each occurs in it, and its length in tokens, packed into one
     * array of bytes, which is all a cache holds of a text: the number of distinct terms and the length, then each term
     * as the variable-length difference from the one before, followed by its count (about a fifth of the heap two
     * arrays of ints take). These read and write it without an object around the bytes, since a snapshot's build
     * reads every cached text's counts.
     */
    static final class Counted {

        private Counted() {}

        /**
         * The packed counts of a text whose term ids, in {@code sorted[0..tokens)}, are in ascending order: each run of
         * one id is one term and its count.
         */
        static byte[] pack(int[] sorted, int tokens) {
            int size = 0;
            int distinct = 0;
            for (int i = 0, previous = 0; i < tokens; ) {
                int end = i + 1;
                while (end < tokens && sorted[end] == sorted[i]) {
                    end++;
                }
                size += VarInts.width(sorted[i] - previous) + VarInts.width(end - i);
                distinct++;
                previous = sorted[i];
                i = end;
            }
            byte[] packed = new byte[VarInts.width(distinct) + VarInts.width(tokens) + size];
            int at = VarInts.put(packed, VarInts.put(packed, 0, distinct), tokens);
            for (int i = 0, previous = 0; i < tokens; ) {
                int end = i + 1;
                while (end < tokens && sorted[end] == sorted[i]) {
                    end++;
                }
                at = VarInts.put(packed, at, sorted[i] - previous);
                at = VarInts.put(packed, at, end - i);
                previous = sorted[i];
                i = end;
            }
            return packed;
        }

        /**
         * How many distinct terms the text has.
         *
         * @throws IllegalArgumentException when the bytes end inside the number
         */
        static int distinct(byte[] packed) {
            return distinct(ByteBuffer.wrap(packed), 0, packed.length);
        }

        /**
         * The text's length in tokens.
         *
         * @throws IllegalArgumentException when the bytes end inside the two numbers in front
         */
        static int length(byte[] packed) {
            return length(ByteBuffer.wrap(packed), 0, packed.length);
        }

        /** As {@link #decode(ByteBuffer, int, int, int[], int[])}, of an array. */
        static int decode(byte[] packed, int[] terms, int[] counts) {
            return decode(ByteBuffer.wrap(packed), 0, packed.length, terms, counts);
        }

        /** How many distinct terms the text packed in {@code in[at..end)} has. */
        static int distinct(ByteBuffer in, int at, int end) {
            return number(in, at, end);
        }

        /** The length in tokens of the text packed in {@code in[at..end)}. */
        static int length(ByteBuffer in, int at, int end) {
            return number(in, at + VarInts.width(distinct(in, at, end)), end);
        }

        /**
         * Writes the term ids (ascending) and their counts of the text packed in {@code in[at..end)} into the first
         * {@link #distinct} places of {@code terms} and {@code counts}, which are at least that long; returns how many
         * that is. Reads with absolute gets only: the buffer may be shared.
         *
         * @throws IllegalArgumentException when the bytes end inside a number
         */
        static int decode(ByteBuffer in, int at, int end, int[] terms, int[] counts) {
            int distinct = distinct(in, at, end);
            int p = at + VarInts.width(distinct) + VarInts.width(length(in, at, end));
            int term = 0;
            for (int i = 0; i < distinct; i++) {
                int v = 0;
                int shift = 0;
                byte b;
                do {
                    if (p >= end) {
                        throw new IllegalArgumentException("counts cut short at byte " + (p - at));
                    }
                    b = in.get(p++);
                    v |= (b & 0x7f) << shift;
                    shift += 7;
                } while (b < 0);
                term += v;
                terms[i] = term;
                int c = 0;
                shift = 0;
                do {
                    if (p >= end) {
                        throw new IllegalArgumentException("counts cut short at byte " + (p - at));
                    }
                    b = in.get(p++);
                    c |= (b & 0x7f) << shift;
                    shift += 7;
                } while (b < 0);
                counts[i] = c;
            }
            return distinct;
        }

        /** The number at {@code at}, read without allocating (as {@link VarInts#get}, which moves a cursor). */
        private static int number(ByteBuffer in, int at, int end) {
            int v = 0;
            int shift = 0;
            byte b;
            int p = at;
            do {
                if (p >= end || shift > 28) {
                    throw new IllegalArgumentException("counts cut short at byte " + (p - at));
                }
                b = in.get(p++);
                v |= (b & 0x7f) << shift;
                shift += 7;
            } while (b < 0);
            return v;
        }
    }

    /**
     * Handles by the identity of the object that stands for a text: the keys and their handles in two arrays in the order
     * they came, found through an open-addressing table of positions. About 17–24 bytes a text, where an {@link
     * java.util.IdentityHashMap} to arrays took about 60, and a namespace of 100k passages has over a million texts (every
     * name, fact and relation is one). Entries are only added: each build fills a new one.
     */
    static final class Handles {
        private Object[] keys;
        private long[] values;
        private int size;
        /** Position + 1 per slot, 0 for an empty one; a power of two at least 4/3 as long as the positions. */
        private int[] slots;

        Handles(int expected) {
            int capacity = Math.max(8, expected);
            keys = new Object[capacity];
            values = new long[capacity];
            // a power of two at most three quarters full: linear probes stay short, and the table is a third of the
            // heap
            slots = new int[Integer.highestOneBit(capacity + capacity / 3) << 1];
        }

        int size() {
            return size;
        }

        /** The value held for {@code key}, or {@link #ABSENT}. */
        long get(Object key) {
            int mask = slots.length - 1;
            for (int at = home(key, mask); ; at = (at + 1) & mask) {
                int slot = slots[at];
                if (slot == 0) {
                    return ABSENT;
                }
                if (keys[slot - 1] == key) {
                    return values[slot - 1];
                }
            }
        }

        /** Holds {@code value} for {@code key} unless a value is held already; whether it was added. */
        boolean putIfAbsent(Object key, long value) {
            int mask = slots.length - 1;
            int at = home(key, mask);
            for (; slots[at] != 0; at = (at + 1) & mask) {
                if (keys[slots[at] - 1] == key) {
                    return false;
                }
            }
            if (size == keys.length) {
                grow();
                return putIfAbsent(key, value);
            }
            keys[size] = key;
            values[size] = value;
            slots[at] = ++size;
            return true;
        }

        /** Every key held, with its value, in the order they came. */
        void forEach(ObjLongConsumer<Object> action) {
            for (int i = 0; i < size; i++) {
                action.accept(keys[i], values[i]);
            }
        }

        /** The heap the arrays take. */
        long bytes() {
            return 48 + 12L * keys.length + 4L * slots.length;
        }

        private void grow() {
            keys = Arrays.copyOf(keys, keys.length * 2);
            values = Arrays.copyOf(values, keys.length);
            slots = new int[slots.length * 2];
            int mask = slots.length - 1;
            for (int i = 0; i < size; i++) {
                int at = home(keys[i], mask);
                while (slots[at] != 0) {
                    at = (at + 1) & mask;
                }
                slots[at] = i + 1;
            }
        }

        private static int home(Object key, int mask) {
            return ((System.identityHashCode(key) * 0x9E3779B9) >>> 7) & mask;
        }
    }

    /** What {@link Handles#get} answers for a key it does not hold. */
    static final long ABSENT = Long.MIN_VALUE;

    private Bm25.Terms terms = new Bm25.Terms();

    /**
     * Where the held counts are: the arena of the namespace's snapshots, given by each build, or one of the cache's own
     * on the heap. A build in another arena (its vectors were compacted into a new one) starts the cache afresh.
     */
    private VectorArena arena;

    /** Whether {@link #arena} is the cache's own rather than the snapshots'. */
    private boolean ownArena;

    /** What the last build used, and what the build under way used so far. */
    private Handles last = new Handles(0);

    private Handles used = new Handles(0);

    /** The counts of texts without a key, read by the build under way: not held after it. */
    private final List<byte[]> unkept = new ArrayList<>();

    /** A build begins in the cache's own arena (see {@link #begin(VectorArena)}). */
    void begin() {
        begin(null);
    }

    /**
     * A build begins, its counts to be held in {@code in} (null: the cache's own arena, on the heap): what an unfinished
     * one before it used is forgotten. In another arena than the last build's, nothing held is reused.
     */
    void begin(VectorArena in) {
        if (in != null && in.closed()) {
            in = null; // a build while the loader closes: its snapshot is served once, nothing is worth holding
        }
        if (in == null ? !ownArena : in != arena) {
            arena = in == null ? VectorArena.onHeap() : in;
            ownArena = in == null;
            last = new Handles(0);
        }
        used = new Handles(last.size()); // about as many as last time: never resized
        unkept.clear();
    }

    /**
     * The handle of the packed counts of a text ({@link Counted}), read by {@link #distinct}, {@link #length} and {@link
     * #decode}: the counts held for its key, or read now (and held, when it has a key).
     */
    long counted(Object key, Supplier<String> text) {
        if (arena == null) {
            begin(null);
        }
        if (key != null) {
            long held = last.get(key);
            if (held == ABSENT) {
                held = used.get(key); // the same text twice in one build
            }
            if (held != ABSENT) {
                used.putIfAbsent(key, held);
                return held;
            }
        }
        byte[] c = terms.count(text.get());
        long handle = key == null ? VectorArena.NONE : kept(c);
        if (handle == VectorArena.NONE) {
            unkept.add(c);
            return -unkept.size() - 1; // never an arena's handle, which is not negative
        }
        used.putIfAbsent(key, handle);
        return handle;
    }

    /**
     * The handle of counts appended to the arena, or {@link VectorArena#NONE} when they are kept for this build only:
     * too long for a handle (no passage's are), or the arena closed under the build (the loader closing).
     */
    private long kept(byte[] counts) {
        if (counts.length > 4L * (VectorArena.MAX_LENGTH - 1)) {
            return VectorArena.NONE;
        }
        try {
            return arena.addBytes(counts);
        } catch (IllegalStateException closedOrFull) {
            return VectorArena.NONE;
        }
    }

    /** How many distinct terms the counts of {@code handle} have. */
    int distinct(long handle) {
        if (handle < 0) {
            return Counted.distinct(unkept(handle));
        }
        int at = VectorArena.bytesStart(handle);
        return Counted.distinct(arena.bytesChunk(handle), at, at + arena.bytesLength(handle));
    }

    /** The length in tokens of the text of {@code handle}. */
    int length(long handle) {
        if (handle < 0) {
            return Counted.length(unkept(handle));
        }
        int at = VectorArena.bytesStart(handle);
        return Counted.length(arena.bytesChunk(handle), at, at + arena.bytesLength(handle));
    }

    /** Writes the term ids and counts of {@code handle} into {@code ids} and {@code counts} ({@link Counted#decode}). */
    int decode(long handle, int[] ids, int[] counts) {
        if (handle < 0) {
            return Counted.decode(unkept(handle), ids, counts);
        }
        int at = VectorArena.bytesStart(handle);
        return Counted.decode(arena.bytesChunk(handle), at, at + arena.bytesLength(handle), ids, counts);
    }

    private byte[] unkept(long handle) {
        return unkept.get((int) (-handle - 2));
    }

    /**
     * The counts the last build used, copied from {@code from} into {@code to}: the arena was compacted, and the next
     * build, in {@code to}, reads none of these texts again. Counts in another arena than {@code from} are left as they
     * are (the next build in {@code to} reads their texts again).
     */
    public void movedTo(VectorArena from, VectorArena to) {
        if (arena != from || from == to) {
            return;
        }
        Handles moved = new Handles(last.size());
        last.forEach((key, h) -> moved.putIfAbsent(key, to.addBytes(from.bytes(h))));
        last = moved;
        arena = to;
        ownArena = false;
    }

    /** How many term ids there are: every id a count holds is below it. */
    int size() {
        return terms.size();
    }

    String term(int id) {
        return terms.terms().get(id);
    }

    /**
     * A build is over, having used {@code termsInUse} distinct terms: what it used is what the next may reuse, and the
     * counts it did not use are garbage of the arena. Starts afresh when the ids number more than twice the terms in
     * use and 50,000 more.
     */
    void built(long termsInUse) {
        Handles kept = used;
        if (arena != null) {
            last.forEach((key, h) -> {
                if (kept.get(key) == ABSENT) {
                    arena.retire(h);
                }
            });
        }
        last = kept;
        used = new Handles(0);
        unkept.clear();
        if (terms.size() > 2 * termsInUse + 50_000) {
            terms = new Bm25.Terms();
            if (arena != null) {
                last.forEach((key, h) -> arena.retire(h));
            }
            last = new Handles(0);
        }
    }

    /** About how much heap the cache takes: the tables of what it holds, its terms, and its own arena's chunks. */
    public long bytes() {
        return last.bytes() + 56L * terms.size() + (ownArena ? arena.heapBytes() : 0);
    }
}
