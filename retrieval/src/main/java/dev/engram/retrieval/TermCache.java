package dev.engram.retrieval;

import java.util.IdentityHashMap;
import java.util.Map;
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
            return number(packed, 0);
        }

        /**
         * The text's length in tokens.
         *
         * @throws IllegalArgumentException when the bytes end inside the two numbers in front
         */
        static int length(byte[] packed) {
            return number(packed, VarInts.width(distinct(packed)));
        }

        /**
         * Writes the text's term ids (ascending) and their counts into the first {@link #distinct} places of {@code
         * terms} and {@code counts}, which are at least that long; returns how many that is.
         */
        static int decode(byte[] packed, int[] terms, int[] counts) {
            int distinct = distinct(packed);
            int at = VarInts.width(distinct) + VarInts.width(length(packed));
            int term = 0;
            for (int i = 0; i < distinct; i++) {
                int v = 0;
                int shift = 0;
                byte b;
                do {
                    b = packed[at++];
                    v |= (b & 0x7f) << shift;
                    shift += 7;
                } while (b < 0);
                term += v;
                terms[i] = term;
                int c = 0;
                shift = 0;
                do {
                    b = packed[at++];
                    c |= (b & 0x7f) << shift;
                    shift += 7;
                } while (b < 0);
                counts[i] = c;
            }
            return distinct;
        }

        /** The heap the packed counts take: the array's header and its bytes. */
        static long bytes(byte[] packed) {
            return 16 + packed.length;
        }

        /** The number at {@code at}, read without allocating (as {@link VarInts#get}, which moves a cursor). */
        private static int number(byte[] packed, int at) {
            int v = 0;
            int shift = 0;
            byte b;
            do {
                if (at >= packed.length || shift > 28) {
                    throw new IllegalArgumentException("counts cut short at byte " + at);
                }
                b = packed[at++];
                v |= (b & 0x7f) << shift;
                shift += 7;
            } while (b < 0);
            return v;
        }
    }

    private Bm25.Terms terms = new Bm25.Terms();
    /** What the last build used, and what the build under way used so far. */
    private Map<Object, byte[]> last = new IdentityHashMap<>();

    private Map<Object, byte[]> used = new IdentityHashMap<>();
    private long bytes;
    private long usedBytes;

    /** A build begins: what an unfinished one before it used is forgotten. */
    void begin() {
        used = new IdentityHashMap<>(last.size() + last.size() / 8); // about as many as last time: never resized
        usedBytes = 0;
    }

    /**
     * The packed counts of a text ({@link Counted}): the ones held for its key, or read now (and held, when it has a
     * key).
     */
    byte[] counted(Object key, Supplier<String> text) {
        if (key != null) {
            byte[] held = last.get(key);
            if (held == null) {
                held = used.get(key); // the same text twice in one build
            }
            if (held != null) {
                if (used.put(key, held) == null) {
                    usedBytes += Counted.bytes(held);
                }
                return held;
            }
        }
        byte[] c = terms.count(text.get());
        if (key != null && used.put(key, c) == null) {
            usedBytes += Counted.bytes(c);
        }
        return c;
    }

    /** How many term ids there are: every id a count holds is below it. */
    int size() {
        return terms.size();
    }

    String term(int id) {
        return terms.terms().get(id);
    }

    /**
     * A build is over, having used {@code termsInUse} distinct terms: what it used is what the next may reuse. Starts
     * afresh when the ids number more than twice the terms in use and 50,000 more.
     */
    void built(long termsInUse) {
        last = used;
        bytes = usedBytes;
        used = new IdentityHashMap<>();
        usedBytes = 0;
        if (terms.size() > 2 * termsInUse + 50_000) {
            terms = new Bm25.Terms();
            last = new IdentityHashMap<>();
            bytes = 0;
        }
    }

    /** About how much heap the held counts take. */
    public long bytes() {
        return bytes + 48L * last.size() + 56L * terms.size();
    }
}
