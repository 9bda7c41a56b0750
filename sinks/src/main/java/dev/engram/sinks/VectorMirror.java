package dev.engram.sinks;

import dev.engram.schemas.MirrorRecord;
import java.util.Collection;
import java.util.List;
import java.util.Map;

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

    @Override
    void close();
}
