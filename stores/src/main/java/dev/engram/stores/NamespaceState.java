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
        long changesSinceThemes,
        java.util.Map<dev.engram.schemas.DocumentStatus, Long> documentsByStatus,
        int inputPartition,
        long inputOffset,
        Instant updatedAt) {

    public NamespaceState {
        documentsByStatus = documentsByStatus == null ? java.util.Map.of() : java.util.Map.copyOf(documentsByStatus);
    }

    public static NamespaceState empty(String namespace) {
        return new NamespaceState(namespace, 0, 0, 0, 0, 0, 0, java.util.Map.of(), -1, -1, Instant.EPOCH);
    }

    public NamespaceState nextVersion() {
        return new NamespaceState(
                namespace,
                version + 1,
                documents,
                passages,
                entities,
                surfaces,
                changesSinceThemes,
                documentsByStatus,
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
                changesSinceThemes,
                documentsByStatus,
                inputPartition,
                inputOffset,
                updatedAt);
    }

    public NamespaceState at(int partition, long offset, Instant time) {
        return new NamespaceState(
                namespace,
                version,
                documents,
                passages,
                entities,
                surfaces,
                changesSinceThemes,
                documentsByStatus,
                partition,
                offset,
                time);
    }

    /** Counts passage changes since the themes were computed; {@code reset} when they just were. */
    public NamespaceState themeChanges(boolean reset, long delta) {
        return new NamespaceState(
                namespace,
                version,
                documents,
                passages,
                entities,
                surfaces,
                reset ? 0 : changesSinceThemes + delta,
                documentsByStatus,
                inputPartition,
                inputOffset,
                updatedAt);
    }

    /** A document moved from one status to another ({@code from} null: it is new). */
    public NamespaceState statusChanged(dev.engram.schemas.DocumentStatus from, dev.engram.schemas.DocumentStatus to) {
        java.util.Map<dev.engram.schemas.DocumentStatus, Long> counts =
                new java.util.EnumMap<>(dev.engram.schemas.DocumentStatus.class);
        counts.putAll(documentsByStatus);
        if (from != null) {
            counts.merge(from, -1L, Long::sum);
            if (counts.get(from) <= 0) {
                counts.remove(from);
            }
        }
        counts.merge(to, 1L, Long::sum);
        return new NamespaceState(
                namespace,
                version,
                documents,
                passages,
                entities,
                surfaces,
                changesSinceThemes,
                counts,
                inputPartition,
                inputOffset,
                updatedAt);
    }
}
