package dev.engram.sinks;

import dev.engram.schemas.MirrorDigest;
import dev.engram.schemas.MirrorRecord;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The vector mirror as the sink uses it (Qdrant in production). */
public interface VectorMirror extends AutoCloseable {

    /**
     * Writes the vectors of {@code records} in their order (upserts and deletes, version-guarded) and waits until the
     * store has applied them. Returns the records the store rejected, with the reason; throws when the store failed as
     * a whole (the sink retries or pauses).
     */
    Map<MirrorRecord, String> apply(List<MirrorRecord> records);

    /** Removes every vector of these objects whatever its version: the graph mirror rejected them. */
    void undo(Collection<MirrorRecord> records);

    /** The ids of the points that hold an object's vectors, for the graph's reference write-back. */
    List<String> points(MirrorRecord record);

    /** Per kind of vector, the (object id → version) of every vector of a namespace held here. */
    Map<MirrorRecord.VectorKind, Map<String, Long>> versions(String namespace);

    /**
     * As {@link #versions(String)}, for the objects in some digest buckets only (see {@link
     * dev.engram.schemas.MirrorDigest#bucket}); a store that can filter on the bucket reads no other.
     */
    default Map<MirrorRecord.VectorKind, Map<String, Long>> versions(String namespace, Set<Integer> buckets) {
        Map<MirrorRecord.VectorKind, Map<String, Long>> out = new EnumMap<>(MirrorRecord.VectorKind.class);
        versions(namespace).forEach((kind, ids) -> {
            Map<String, Long> kept = new HashMap<>();
            ids.forEach((id, version) -> {
                if (buckets.contains(MirrorDigest.bucket(id))) {
                    kept.put(id, version);
                }
            });
            out.put(kind, kept);
        });
        return out;
    }

    @Override
    void close();
}
