package dev.engram.stores;

import dev.engram.schemas.DocumentStatus;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;

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
        Map<DocumentStatus, Long> documentsByStatus,
        int inputPartition,
        long inputOffset,
        Instant updatedAt) {

    public NamespaceState {
        documentsByStatus = documentsByStatus == null ? Map.of() : Map.copyOf(documentsByStatus);
    }

    public static NamespaceState empty(String namespace) {
        return new NamespaceState(namespace, 0, 0, 0, 0, 0, 0, Map.of(), -1, -1, Instant.EPOCH);
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
    public NamespaceState statusChanged(DocumentStatus from, DocumentStatus to) {
        Map<DocumentStatus, Long> counts = new EnumMap<>(DocumentStatus.class);
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
