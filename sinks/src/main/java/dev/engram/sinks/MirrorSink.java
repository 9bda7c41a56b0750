package dev.engram.sinks;

import dev.engram.metrics.Meters;
import dev.engram.schemas.MirrorRecord;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the mirror topic to Neo4j and Qdrant, per partition in order (a namespace lives on one partition), in batches:
 * graph write → vector write → reference write-back (the graph elements record their Qdrant points). The graph write
 * and the write-back each move a position kept in Neo4j in the same transaction, so a restart resumes exactly where the
 * visible effects end. Without Neo4j, positions are Kafka's committed offsets (writes are idempotent and
 * version-guarded).
 *
 * <p>A transient failure (connection refused, timeout, unavailable) is retried with backoff, then the partition is
 * paused for a while and tried again — lag grows, nothing is dropped, ingestion and queries go on. A write the store
 * rejects is undone in the other mirror so that both agree without it, and a compensation event tells memory, which
 * repairs it later; a repaired object is reported too. A failure that a smaller batch may avoid (a transaction timeout,
 * a memory limit, a message too large) splits the batch in halves at once, down to single records: a record over the
 * store's limit on its own is rejected like one the store refuses, so no batch holds its partition forever, while one
 * that times out on its own means the store stalls, and pauses the partition after one call per halving.
 */
public final class MirrorSink implements Runnable, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MirrorSink.class);

    /** How the sink runs. */
    public record Settings(
            String mirrorTopic,
            String compensationsTopic,
            String deadLetterTopic,
            String group,
            int batchSize,
            int retries,
            Duration backoff,
            Duration pause) {
        public Settings {
            Objects.requireNonNull(mirrorTopic, "mirrorTopic");
            Objects.requireNonNull(compensationsTopic, "compensationsTopic");
            Objects.requireNonNull(deadLetterTopic, "deadLetterTopic");
            Objects.requireNonNull(group, "group");
            if (batchSize < 1 || retries < 0) {
                throw new IllegalArgumentException("batch size must be positive and retries not negative");
            }
        }

        /**
         * The settings of the sink's consumer over {@code client}'s (bootstrap servers, security, any other Kafka
         * setting the operator gave). What the sink's guarantees rest on is always set: this group, positions
         * committed by the sink only, from the earliest record, only committed records (the memory step writes the
         * mirror topic in exactly-once transactions), a batch per poll. What only tunes the fetch is the operator's
         * when given: fetches of up to {@code maxRecordBytes} per partition otherwise, and the system's TCP receive
         * buffer, which grows with the transfer, so that a large fetch streams in while the sink writes the batch
         * before it instead of waiting for the next poll.
         */
        public Map<String, Object> consumerConfig(Map<String, Object> client, int maxRecordBytes) {
            Map<String, Object> c = new HashMap<>(client);
            c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, batchSize);
            c.putIfAbsent(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, maxRecordBytes);
            c.putIfAbsent(ConsumerConfig.RECEIVE_BUFFER_CONFIG, -1);
            return c;
        }
    }

    private final Settings settings;
    private final Consumer<String, byte[]> consumer;
    private final Neo4jMirror graph;
    private final VectorMirror vectors;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Polled batches not written yet, in the order they were polled. */
    private final ArrayDeque<MirrorDecoder.Batch> ahead = new ArrayDeque<>();
    /** Decodes (and validates) polled records while the sink thread writes the ones before them. */
    private final MirrorDecoder decoder = new MirrorDecoder();

    private final Retries retries;
    private final SinkPartitions partitions;
    private final MirrorWrites writes;
    private final MirrorReports reports;
    private final SinkLag lag;

    private long polls;

    /**
     * @param graph the graph mirror, or null without Neo4j
     * @param vectors the vector mirror, or null without Qdrant
     */
    public MirrorSink(
            Settings settings,
            Consumer<String, byte[]> consumer,
            Producer<String, byte[]> producer,
            Neo4jMirror graph,
            VectorMirror vectors,
            Meters meters,
            Clock clock) {
        if (graph == null && vectors == null) {
            throw new IllegalArgumentException("a sink needs Neo4j, Qdrant or both");
        }
        this.settings = settings;
        this.consumer = consumer;
        this.graph = graph;
        this.vectors = vectors;
        this.retries = new Retries(settings, meters, closed);
        this.partitions = new SinkPartitions(settings, consumer, graph, vectors != null, meters, clock, retries, ahead);
        this.writes = new MirrorWrites(settings, graph, vectors, meters, retries);
        this.reports = new MirrorReports(settings, producer, meters, clock, vectors != null);
        this.lag = new SinkLag(consumer, partitions, clock);
        for (Meters.Sink s : sinks()) {
            meters.registerSink(s);
            lag.gauges(meters, s);
        }
    }

    private List<Meters.Sink> sinks() {
        List<Meters.Sink> out = new ArrayList<>();
        if (graph != null) {
            out.add(Meters.Sink.NEO4J);
        }
        if (vectors != null) {
            out.add(Meters.Sink.QDRANT);
        }
        return out;
    }

    /** True while some partition is paused after transient failures. */
    public boolean paused() {
        return partitions.paused();
    }

    @Override
    public void run() {
        try {
            while (graph != null && !closed.get()) {
                try {
                    retries.retrying(Meters.Sink.NEO4J, () -> {
                        graph.ensureSchema();
                        return null;
                    });
                    break;
                } catch (Retries.Paused | Retries.Rejection e) {
                    LOG.warn("Neo4j's constraints cannot be created yet, trying again: {}", SinkFailure.reason(e));
                    Retries.sleep(settings.pause());
                }
            }
            consumer.subscribe(List.of(settings.mirrorTopic()), partitions.rebalance());
            while (!closed.get()) {
                try {
                    pollOnce();
                } catch (WakeupException e) {
                    throw e;
                } catch (RuntimeException e) {
                    // the sink never stops on its own: what fails here is read and tried again after a pause
                    LOG.error("mirror sink failed, trying again in {}", settings.pause(), e);
                    Retries.sleep(settings.pause());
                    partitions.rewind();
                }
            }
        } catch (WakeupException | Retries.Paused e) {
            if (!closed.get()) {
                throw e;
            }
        } finally {
            decoder.shutdownNow();
            partitions.commitLast();
            consumer.close();
        }
    }

    private void pollOnce() {
        partitions.resumeDue();
        ConsumerRecords<String, byte[]> polled = consumer.poll(Duration.ofMillis(200));
        long seq = ++polls;
        for (TopicPartition tp : polled.partitions()) {
            List<ConsumerRecord<String, byte[]>> records = polled.records(tp);
            for (int i = 0; i < records.size(); i += settings.batchSize()) {
                List<ConsumerRecord<String, byte[]>> batch =
                        records.subList(i, Math.min(records.size(), i + settings.batchSize()));
                ahead.add(decoder.submit(seq, tp, batch, vectors != null));
            }
        }
        // Under a backlog, a poll's batches decode on the decoding thread while the previous poll's are written;
        // caught up (a poll short of a batch), they are written at once.
        boolean caughtUp = polled.count() < settings.batchSize();
        while (!ahead.isEmpty() && (ahead.peek().seq() < seq || caughtUp)) {
            MirrorDecoder.Batch b = ahead.poll();
            if (graph != null && !partitions.positioned(b.tp())) {
                // its position is not known: never written without it, read again from there once Neo4j gives it
                ahead.removeIf(later -> later.tp().equals(b.tp()));
                partitions.awaitPosition(b.tp());
                continue;
            }
            if (!process(b.tp(), b.records(), b.decoded())) {
                // paused: the partition is read again from this batch on
                TopicPartition tp = b.tp();
                ahead.removeIf(later -> later.tp().equals(tp));
            }
        }
        lag.update(polled);
        partitions.commitDue();
    }

    /** Applies one batch; false when the partition paused (the rest of what was polled is read again later). */
    private boolean process(
            TopicPartition tp, List<ConsumerRecord<String, byte[]>> batch, List<MirrorDecoder.Decoded> decoded) {
        Neo4jMirror.Position at = partitions.at(tp);
        long first = batch.get(0).offset();
        long next = batch.get(batch.size() - 1).offset() + 1;
        List<MirrorRecord> toGraph = new ArrayList<>();
        List<MirrorRecord> toVectors = new ArrayList<>();
        for (MirrorDecoder.Decoded d : decoded) {
            ConsumerRecord<String, byte[]> r = d.source();
            if (d.record() == null) {
                if (r.offset() >= Math.min(at.graph(), at.vectors())) {
                    reports.deadLetter(r, d.error());
                }
                continue;
            }
            if (r.offset() >= at.graph()) {
                toGraph.add(d.record());
            }
            if (r.offset() >= at.vectors()) {
                toVectors.add(d.record());
            }
        }
        try {
            // a graph-only sink moves its position with the graph write: what it dead-letters is written first
            reports.acknowledgeLetters();
            Map<MirrorRecord, String> graphRejected = new LinkedHashMap<>();
            if (graph != null && (!toGraph.isEmpty() || at.graph() < next)) {
                graphRejected.putAll(writes.writeGraph(tp, toGraph, next));
                if (graphRejected.isEmpty()) {
                    // else Neo4j's position stays, so that a batch read again (after a pause, a restart) reports the
                    // rejections again until they are acknowledged
                    partitions.moved(tp, new Neo4jMirror.Position(next, at.vectors()));
                }
            }
            toVectors.removeAll(graphRejected.keySet());
            Map<MirrorRecord, String> vectorRejected = new LinkedHashMap<>();
            Map<MirrorRecord, List<String>> points = new LinkedHashMap<>();
            if (vectors != null && !toVectors.isEmpty()) {
                vectorRejected.putAll(writes.writeVectors(toVectors));
                for (MirrorRecord r : toVectors) {
                    if (!vectorRejected.containsKey(r)
                            && !r.deleted()
                            && !vectors.points(r).isEmpty()) {
                        points.put(r, vectors.points(r));
                    }
                }
            }
            // a half-applied pair is undone, so that both mirrors agree without it until memory repairs it
            if (graph != null && !vectorRejected.isEmpty()) {
                retries.retrying(Meters.Sink.NEO4J, () -> {
                    graph.undo(vectorRejected.keySet());
                    return null;
                });
            }
            if (vectors != null && !graphRejected.isEmpty()) {
                retries.retrying(Meters.Sink.QDRANT, () -> {
                    vectors.undo(graphRejected.keySet());
                    return null;
                });
            }
            reports.compensate(graphRejected, vectorRejected, toGraph.isEmpty() ? toVectors : toGraph);
            if (graph != null && vectors != null) {
                retries.retrying(Meters.Sink.NEO4J, () -> {
                    graph.writeBack(points, settings.group(), tp.topic(), tp.partition(), next);
                    return null;
                });
            } else if (graph != null) {
                if (!graphRejected.isEmpty()) {
                    retries.retrying(
                            Meters.Sink.NEO4J,
                            () -> graph.apply(List.of(), settings.group(), tp.topic(), tp.partition(), next, true));
                }
            } else {
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(next)));
            }
            partitions.applied(tp, next);
            return true;
        } catch (Retries.Paused e) {
            LOG.warn(
                    "mirror sink pauses partition {} for {} after transient failures: {}",
                    tp,
                    settings.pause(),
                    SinkFailure.reason(e.getCause()));
            partitions.pauseAt(tp, first);
            lag.pendingSince(batch.get(0).timestamp());
            return false;
        }
    }

    @Override
    public void close() {
        closed.set(true);
        consumer.wakeup();
    }
}
