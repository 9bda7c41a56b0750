package dev.engram.sinks;

import dev.engram.metrics.Meters;
import dev.engram.schemas.MirrorRecord;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Writes a batch's records to the graph and to the vector mirror and meters the writes: a batch a store refuses, or
 * that fails in a way a smaller batch may avoid, is written in halves down to single records, and the single records
 * the store refuses or cannot take are returned with the reason.
 */
final class MirrorWrites {

    private final MirrorSink.Settings settings;
    private final Neo4jMirror graph;
    private final VectorMirror vectors;
    private final Meters meters;
    private final Retries retries;

    /**
     * @param graph the graph mirror, or null without Neo4j
     * @param vectors the vector mirror, or null without Qdrant
     */
    MirrorWrites(
            MirrorSink.Settings settings, Neo4jMirror graph, VectorMirror vectors, Meters meters, Retries retries) {
        this.settings = settings;
        this.graph = graph;
        this.vectors = vectors;
        this.meters = meters;
        this.retries = retries;
    }

    /**
     * Writes {@code records} of partition {@code tp} to the graph and moves its position there to {@code next}, unless
     * some are rejected; returns the rejected records with the reason.
     */
    Map<MirrorRecord, String> writeGraph(TopicPartition tp, List<MirrorRecord> records, long next) {
        long started = System.nanoTime();
        try {
            long applied = retries.splittable(
                    Meters.Sink.NEO4J,
                    () -> graph.apply(records, settings.group(), tp.topic(), tp.partition(), next, vectors == null));
            meters.sinkWrite(Meters.Sink.NEO4J, records.size(), true, Duration.ofNanos(System.nanoTime() - started));
            meters.sinkRecords(
                    Meters.Sink.NEO4J, Meters.SinkRecordOutcome.APPLIED, (int) Math.min(applied, records.size()));
            meters.sinkRecords(Meters.Sink.NEO4J, Meters.SinkRecordOutcome.SUPERSEDED, (int)
                    Math.max(0, records.size() - applied));
            return Map.of();
        } catch (Retries.Rejection | Retries.TooBig e) {
            meters.sinkWrite(Meters.Sink.NEO4J, records.size(), false, Duration.ofNanos(System.nanoTime() - started));
        }
        // find the records Neo4j refuses or cannot take, in halves; the position moves past the batch once they are
        // reported
        Map<MirrorRecord, String> rejected = new LinkedHashMap<>();
        long applied = graphInParts(records, rejected);
        int accepted = records.size() - rejected.size();
        meters.sinkRecords(Meters.Sink.NEO4J, Meters.SinkRecordOutcome.APPLIED, (int) Math.min(applied, accepted));
        meters.sinkRecords(
                Meters.Sink.NEO4J, Meters.SinkRecordOutcome.SUPERSEDED, (int) Math.max(0, accepted - applied));
        if (rejected.isEmpty()) {
            // refused as a batch, accepted in parts: nothing to report
            retries.retrying(
                    Meters.Sink.NEO4J,
                    () -> graph.apply(List.of(), settings.group(), tp.topic(), tp.partition(), next, vectors == null));
        }
        return rejected;
    }

    /**
     * Writes {@code records} to the graph without moving a position: at once, else (refused, or failed in a way a
     * smaller batch may avoid) each half in turn, down to single records. A single record Neo4j refuses, or that is
     * too large for it on its own, is rejected with the reason; one that times out on its own means Neo4j stalls, and
     * pauses the partition (after at most one call per halving). Records are whole states at versions, so writing a
     * part again is harmless. Returns how many elements were written.
     */
    private long graphInParts(List<MirrorRecord> records, Map<MirrorRecord, String> rejected) {
        try {
            return retries.splittable(Meters.Sink.NEO4J, () -> graph.apply(records));
        } catch (Retries.Rejection | Retries.TooBig e) {
            if (records.size() == 1) {
                rejectAlone(Meters.Sink.NEO4J, e);
                rejected.put(records.get(0), SinkFailure.reason(e.getCause()));
                return 0;
            }
            int half = records.size() / 2;
            return graphInParts(records.subList(0, half), rejected)
                    + graphInParts(records.subList(half, records.size()), rejected);
        }
    }

    /** Writes {@code records} to the vector mirror; returns the records it refused with the reason. */
    Map<MirrorRecord, String> writeVectors(List<MirrorRecord> records) {
        long started = System.nanoTime();
        try {
            Map<MirrorRecord, String> rejected = vectorsInParts(records);
            meters.sinkWrite(Meters.Sink.QDRANT, records.size(), true, Duration.ofNanos(System.nanoTime() - started));
            meters.sinkRecords(Meters.Sink.QDRANT, Meters.SinkRecordOutcome.APPLIED, records.size() - rejected.size());
            return rejected;
        } catch (Retries.Rejection e) {
            // the vector mirror isolates the points it refuses itself; a refusal of the whole batch (a collection
            // gone, a request refused) says nothing against the records: wait and try again
            meters.sinkWrite(Meters.Sink.QDRANT, records.size(), false, Duration.ofNanos(System.nanoTime() - started));
            meters.sinkPause(Meters.Sink.QDRANT);
            throw new Retries.Paused(e.getCause());
        }
    }

    /**
     * Writes {@code records} to the vector mirror: at once, else (failed in a way a smaller batch may avoid) each half
     * in turn, down to single records, rejected as {@link #graphInParts} rejects them. Returns the records the mirror
     * refused.
     */
    private Map<MirrorRecord, String> vectorsInParts(List<MirrorRecord> records) {
        try {
            return retries.splittable(Meters.Sink.QDRANT, () -> vectors.apply(records));
        } catch (Retries.TooBig e) {
            if (records.size() == 1) {
                rejectAlone(Meters.Sink.QDRANT, e);
                return Map.of(records.get(0), SinkFailure.reason(e.getCause()));
            }
            int half = records.size() / 2;
            Map<MirrorRecord, String> rejected = new LinkedHashMap<>(vectorsInParts(records.subList(0, half)));
            rejected.putAll(vectorsInParts(records.subList(half, records.size())));
            return rejected;
        }
    }

    /**
     * A single record whose write failed: a refusal, or a failure surely of its size, rejects it; a timeout of one
     * record says the store stalls, and pauses the partition instead.
     */
    private void rejectAlone(Meters.Sink sink, RuntimeException e) {
        if (e instanceof Retries.TooBig && SinkFailure.sizeBound(e.getCause()) != SinkFailure.Size.SURELY) {
            meters.sinkPause(sink);
            throw new Retries.Paused(e.getCause());
        }
    }
}
