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
     * A text's distinct terms (ids ascending), how often each occurs in it, and its length in tokens. Packed, as a cache
     * holds one per passage and name of a namespace: the number of distinct terms and the length, then each term as the
     * variable-length difference from the one before, followed by its count, all in one array of bytes (about a fifth
     * of the heap two arrays of ints take), which is what the cache holds; this reads it.
     */
    static final class Counted {
        private final byte[] packed;
        private final int distinct;
        private final int length;
        /** Where the terms begin, past the two numbers in front. */
        private final int body;

        /**
         * The counts of a text whose term ids, in {@code sorted[0..tokens)}, are in ascending order: each run of one id
         * is one term and its count.
         */
        Counted(int[] sorted, int tokens) {
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
            this.body = VarInts.width(distinct) + VarInts.width(tokens);
            this.packed = new byte[body + size];
            this.distinct = distinct;
            this.length = tokens;
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
        }

        /** The counts packed as {@link #packed()} gave them. */
        Counted(byte[] packed) {
            this.packed = packed;
            int[] at = {0};
            this.distinct = VarInts.get(packed, at);
            this.length = VarInts.get(packed, at);
            this.body = at[0];
        }

        /** The counts as one array of bytes: what a cache holds of them. */
        byte[] packed() {
            return packed;
        }

        /** How many distinct terms the text has. */
        int distinct() {
            return distinct;
        }

        /** The text's length in tokens. */
        int length() {
            return length;
        }

        /**
         * Writes the text's term ids (ascending) and their counts into the first {@link #distinct()} places of
         * {@code terms} and {@code counts}, which are at least that long.
         */
        void decode(int[] terms, int[] counts) {
            int at = body;
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
        }

        long bytes() {
            return 16 + packed.length;
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

    /** The counts of a text: the ones held for its key, or read now (and held, when it has a key). */
    Counted counted(Object key, Supplier<String> text) {
        if (key != null) {
            byte[] held = last.get(key);
            if (held == null) {
                held = used.get(key); // the same text twice in one build
            }
            if (held != null) {
                Counted c = new Counted(held);
                if (used.put(key, held) == null) {
                    usedBytes += c.bytes();
                }
                return c;
            }
        }
        Counted c = terms.count(text.get());
        if (key != null && used.put(key, c.packed()) == null) {
            usedBytes += c.bytes();
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
