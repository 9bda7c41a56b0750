package dev.engram.stores;

import java.time.Instant;

/**
 * Counters and the watermark of a namespace: the version of its last memory change and the input position
 * (partition, offset) the memory has processed up to.
 */
public record NamespaceState(
        String namespace,
        long version,
        long documents,
        long passages,
        long entities,
        int inputPartition,
        long inputOffset,
        Instant updatedAt) {

    public static NamespaceState empty(String namespace) {
        return new NamespaceState(namespace, 0, 0, 0, 0, -1, -1, Instant.EPOCH);
    }
}
