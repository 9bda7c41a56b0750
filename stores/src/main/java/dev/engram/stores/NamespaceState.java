package dev.engram.stores;

import java.time.Instant;

/**
 * Counters and the watermark of a namespace: the version of its last memory change and the input position
 * (partition, offset) the memory has processed up to. {@code entities} counts resolved entities, {@code surfaces}
 * the surface entities (distinct name and type) they group.
 */
public record NamespaceState(
        String namespace,
        long version,
        long documents,
        long passages,
        long entities,
        long surfaces,
        int inputPartition,
        long inputOffset,
        Instant updatedAt) {

    public static NamespaceState empty(String namespace) {
        return new NamespaceState(namespace, 0, 0, 0, 0, 0, -1, -1, Instant.EPOCH);
    }

    public NamespaceState nextVersion() {
        return new NamespaceState(
                namespace,
                version + 1,
                documents,
                passages,
                entities,
                surfaces,
                inputPartition,
                inputOffset,
                updatedAt);
    }

    public NamespaceState plus(long documentsDelta, long passagesDelta, long entitiesDelta, long surfacesDelta) {
        return new NamespaceState(
                namespace,
                version,
                documents + documentsDelta,
                passages + passagesDelta,
                entities + entitiesDelta,
                surfaces + surfacesDelta,
                inputPartition,
                inputOffset,
                updatedAt);
    }

    public NamespaceState at(int partition, long offset, Instant time) {
        return new NamespaceState(namespace, version, documents, passages, entities, surfaces, partition, offset, time);
    }
}
