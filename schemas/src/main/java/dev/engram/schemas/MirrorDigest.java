package dev.engram.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * How the consistency check compares a namespace's objects across memory, Neo4j and Qdrant without shipping every id:
 * each object falls in one of {@link #BUCKETS} buckets by its id, and each store sums, per bucket, a hash of every
 * object's (id, version). Equal counts and sums per bucket mean the same objects at the same versions; only the buckets
 * that differ are listed id by id. The mirrors store {@code bucket} and {@code hash} with each element, so Neo4j can sum
 * them in a query.
 */
public final class MirrorDigest {

    /** Buckets per kind of object. */
    public static final int BUCKETS = 64;

    private MirrorDigest() {}

    /** The bucket of an object id, in [0, {@link #BUCKETS}). */
    public static int bucket(String id) {
        return (fnv(id.getBytes(UTF_8)) & Integer.MAX_VALUE) % BUCKETS;
    }

    /** A non-negative 31-bit hash of (id, version); sums of many fit a long. */
    public static long hash(String id, long version) {
        return fnv((id + '\u0000' + version).getBytes(UTF_8)) & Integer.MAX_VALUE;
    }

    /** 32-bit FNV-1a. */
    private static int fnv(byte[] bytes) {
        int h = 0x811c9dc5;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x01000193;
        }
        return h;
    }
}
