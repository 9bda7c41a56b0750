package dev.engram.stores;

import java.time.Instant;

/**
 * What memory knows of one object's mirrors: the version the object last changed at (the mirrors must hold exactly
 * this version), and, when a mirror rejected it, that it was compensated, by which mirror and why.
 *
 * @param vectors the kinds of vector the object has, as bits of {@link dev.engram.schemas.MirrorRecord.VectorKind#bit()}
 * @param compensated true while the mirrors hold the object without this version because a write was rejected
 */
public record MirrorEntry(
        long version, int vectors, boolean compensated, String sink, String reason, int repairs, Instant at) {

    public MirrorEntry {
        reason = reason == null ? "" : reason;
        sink = sink == null ? "" : sink;
    }

    public static MirrorEntry at(long version, int vectors, Instant at) {
        return new MirrorEntry(version, vectors, false, "", "", 0, at);
    }

    public MirrorEntry compensated(String bySink, String why, Instant when) {
        return new MirrorEntry(version, vectors, true, bySink, why, repairs, when);
    }

    public MirrorEntry repairing(Instant when) {
        return new MirrorEntry(version, vectors, compensated, sink, reason, repairs + 1, when);
    }

    public MirrorEntry synced(Instant when) {
        return new MirrorEntry(version, vectors, false, "", "", repairs, when);
    }
}
