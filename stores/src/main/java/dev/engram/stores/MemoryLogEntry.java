package dev.engram.stores;

import java.util.List;
import java.util.Locale;

/**
 * What one memory transaction changed of a namespace, kept in the {@code memory-log} store under the version it
 * reached: the passages and surface entities whose state changed (or that left), and the version it started from, so
 * that a reader can tell an unbroken run of entries from one with a gap. A reader that holds a namespace's memory as
 * of one version learns from the entries after it exactly which objects to read again.
 *
 * @param since the namespace's version before the transaction (the key of the entry before, when none is missing)
 * @param passages ids of the passages whose stored state changed, or that were removed
 * @param surfaces ids of the surface entities whose stored state changed, or that were removed
 * @param whole the transaction changed more than {@link #MAX_IDS} objects: they are not listed (an entry stays a small
 *     record whatever a document holds), and a reader reads the namespace whole
 */
public record MemoryLogEntry(long since, List<String> passages, List<String> surfaces, boolean whole) {

    /** The most ids an entry lists (some 350 KB); a transaction that changed more is logged as {@link #whole}. */
    public static final int MAX_IDS = 10_000;

    /**
     * How many versions of a namespace the log keeps: entries for older versions are removed as newer ones are
     * written. A reader whose last version is older than that reads the namespace whole.
     */
    public static final long KEPT_VERSIONS = 100_000;

    public MemoryLogEntry {
        passages = passages == null ? List.of() : List.copyOf(passages);
        surfaces = surfaces == null ? List.of() : List.copyOf(surfaces);
        if (whole && !(passages.isEmpty() && surfaces.isEmpty())) {
            throw new IllegalArgumentException("an entry of a whole change lists no ids");
        }
    }

    /** The entry of a transaction from {@code since} that changed these objects, listed or, past the limit, not. */
    public static MemoryLogEntry of(long since, List<String> passages, List<String> surfaces) {
        return passages.size() + surfaces.size() > MAX_IDS
                ? new MemoryLogEntry(since, List.of(), List.of(), true)
                : new MemoryLogEntry(since, passages, surfaces, false);
    }

    /** The key of a namespace's entry for {@code version}: versions as fixed-width decimals sort as numbers. */
    public static String key(String namespace, long version) {
        if (version < 0) {
            throw new IllegalArgumentException("a version is never negative: " + version);
        }
        return Keys.of(namespace, String.format(Locale.ROOT, "%019d", version));
    }

    /** The version of an entry's key. */
    public static long version(String key) {
        return Long.parseLong(Keys.last(key));
    }
}
