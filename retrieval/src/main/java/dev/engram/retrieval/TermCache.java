package dev.engram.retrieval;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The term counts of the texts a namespace's BM25 indexes were built over, kept from one snapshot to the next: a text
 * whose counts are held is not read again. Texts are known by the identity of an immutable object that stands for
 * them (a passage record, a name string), which the snapshot's builder keeps for as long as the text does not change;
 * an object not seen before has its text read. What one build did not use is forgotten by the next.
 *
 * <p>Term ids are this cache's: they grow with every term ever read, so once they number far more than the terms the
 * last build used (texts changed or left), the cache starts afresh. Not thread-safe: a namespace's snapshots are built
 * one at a time.
 */
public final class TermCache {

    /** A text's distinct terms (ids ascending), how often each occurs in it, and its length in tokens. */
    record Counted(int[] terms, int[] counts, int length) {

        long bytes() {
            return 48 + 8L * terms.length;
        }
    }

    private Bm25.Terms terms = new Bm25.Terms();
    /** What the last build used, and what the build under way used so far. */
    private Map<Object, Counted> last = new IdentityHashMap<>();

    private Map<Object, Counted> used = new IdentityHashMap<>();
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
            Counted c = last.get(key);
            if (c == null) {
                c = used.get(key); // the same text twice in one build
            }
            if (c != null) {
                if (used.put(key, c) == null) {
                    usedBytes += c.bytes();
                }
                return c;
            }
        }
        Counted c = terms.count(text.get());
        if (key != null && used.put(key, c) == null) {
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
