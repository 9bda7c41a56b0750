package dev.engram.sinks;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorRecord;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
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

    /** Thrown when transient failures outlasted the retries: the partition pauses. */
    static final class Paused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Paused(Throwable cause) {
            super(cause);
        }
    }

    private final Settings settings;
    private final Consumer<String, byte[]> consumer;
    private final Producer<String, byte[]> producer;
    private final Neo4jMirror graph;
    private final VectorMirror vectors;
    private final Meters meters;
    private final Clock clock;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Map<TopicPartition, Neo4jMirror.Position> positions = new HashMap<>();
    /** Paused partitions and when they are tried again; read by the gauges from other threads. */
    private final Map<TopicPartition, Instant> pausedUntil = new ConcurrentHashMap<>();
    /** Assigned partitions whose position Neo4j could not give yet. */
    private final Set<TopicPartition> unpositioned = new HashSet<>();

    private final List<Future<RecordMetadata>> pendingLetters = new ArrayList<>();
    /** Polled batches not written yet, in the order they were polled. */
    private final ArrayDeque<Batch> ahead = new ArrayDeque<>();
    /** Decodes (and validates) polled records while the sink thread writes the ones before them. */
    private final ExecutorService decoder = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-mirror-decode");
        t.setDaemon(true);
        return t;
    });

    private static final long COMMIT_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Positions Kafka is told of next (with Neo4j), and when it was last told. */
    private final Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>();

    private long lastCommitNanos;
    private long polls;
    private volatile long lagRecords;
    private volatile Instant oldestPending;

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
        this.producer = producer;
        this.graph = graph;
        this.vectors = vectors;
        this.meters = meters;
        this.clock = clock;
        for (Meters.Sink s : sinks()) {
            meters.registerSink(s);
            meters.sinkGauges(
                    s,
                    this,
                    m -> m.pausedUntil.isEmpty() ? 0 : 1,
                    m -> m.lagRecords,
                    m -> m.oldestPending == null
                            ? 0
                            : Duration.between(m.oldestPending, m.clock.instant())
                                            .toMillis()
                                    / 1000.0);
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
        return !pausedUntil.isEmpty();
    }

    @Override
    public void run() {
        try {
            while (graph != null && !closed.get()) {
                try {
                    retrying(Meters.Sink.NEO4J, () -> {
                        graph.ensureSchema();
                        return null;
                    });
                    break;
                } catch (Paused | Rejection e) {
                    LOG.warn("Neo4j's constraints cannot be created yet, trying again: {}", SinkFailure.reason(e));
                    sleep(settings.pause());
                }
            }
            consumer.subscribe(List.of(settings.mirrorTopic()), new Rebalance());
            while (!closed.get()) {
                try {
                    pollOnce();
                } catch (WakeupException e) {
                    throw e;
                } catch (RuntimeException e) {
                    // the sink never stops on its own: what fails here is read and tried again after a pause
                    LOG.error("mirror sink failed, trying again in {}", settings.pause(), e);
                    sleep(settings.pause());
                    rewind();
                }
            }
        } catch (WakeupException | Paused e) {
            if (!closed.get()) {
                throw e;
            }
        } finally {
            decoder.shutdownNow();
            if (!toCommit.isEmpty()) {
                try {
                    consumer.commitSync(toCommit, Duration.ofSeconds(2));
                } catch (RuntimeException e) {
                    LOG.debug("last positions not committed to Kafka (Neo4j holds them): {}", e.toString());
                }
            }
            consumer.close();
        }
    }

    private void pollOnce() {
        resumeDue();
        ConsumerRecords<String, byte[]> polled = consumer.poll(Duration.ofMillis(200));
        long seq = ++polls;
        for (TopicPartition tp : polled.partitions()) {
            List<ConsumerRecord<String, byte[]>> records = polled.records(tp);
            for (int i = 0; i < records.size(); i += settings.batchSize()) {
                List<ConsumerRecord<String, byte[]>> batch =
                        records.subList(i, Math.min(records.size(), i + settings.batchSize()));
                ahead.add(new Batch(seq, tp, batch, decoder.submit(() -> decodeAll(batch, vectors != null))));
            }
        }
        // Under a backlog, a poll's batches decode on the decoding thread while the previous poll's are written;
        // caught up (a poll short of a batch), they are written at once.
        boolean caughtUp = polled.count() < settings.batchSize();
        while (!ahead.isEmpty() && (ahead.peek().seq() < seq || caughtUp)) {
            Batch b = ahead.poll();
            if (graph != null && !positions.containsKey(b.tp())) {
                // its position is not known: never written without it, read again from there once Neo4j gives it
                ahead.removeIf(later -> later.tp().equals(b.tp()));
                awaitPosition(b.tp());
                continue;
            }
            if (!process(b.tp(), b.records(), decoded(b))) {
                // paused: the partition is read again from this batch on
                TopicPartition tp = b.tp();
                ahead.removeIf(later -> later.tp().equals(tp));
            }
        }
        updateLag(polled);
        commitDue();
    }

    /**
     * With Neo4j, a partition's position is kept there, and Kafka's committed offsets only show the sink group's lag
     * to Kafka's tools: committed at most once a second, not after every batch.
     */
    private void commitDue() {
        long now = System.nanoTime();
        if (!toCommit.isEmpty() && now - lastCommitNanos >= COMMIT_EVERY_NANOS) {
            consumer.commitAsync(new HashMap<>(toCommit), null);
            toCommit.clear();
            lastCommitNanos = now;
        }
    }

    /** A polled batch of one partition, and its decoding. */
    private record Batch(
            long seq,
            TopicPartition tp,
            List<ConsumerRecord<String, byte[]>> records,
            Future<List<Decoded>> decoding) {}

    /** A polled record and what it holds: a mirror record, or why it is not one. */
    private record Decoded(ConsumerRecord<String, byte[]> source, MirrorRecord record, String error) {}

    private static List<Decoded> decodeAll(List<ConsumerRecord<String, byte[]>> batch, boolean withVectors) {
        List<Decoded> out = new ArrayList<>(batch.size());
        for (ConsumerRecord<String, byte[]> r : batch) {
            out.add(decode(r, withVectors));
        }
        return out;
    }

    private static List<Decoded> decoded(Batch b) {
        try {
            return b.decoding().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Paused(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("decoding failed", e.getCause());
        }
    }

    /** Applies one batch; false when the partition paused (the rest of what was polled is read again later). */
    private boolean process(TopicPartition tp, List<ConsumerRecord<String, byte[]>> batch, List<Decoded> decoded) {
        Neo4jMirror.Position at = positions.getOrDefault(tp, Neo4jMirror.Position.NONE);
        long first = batch.get(0).offset();
        long next = batch.get(batch.size() - 1).offset() + 1;
        List<MirrorRecord> toGraph = new ArrayList<>();
        List<MirrorRecord> toVectors = new ArrayList<>();
        for (Decoded d : decoded) {
            ConsumerRecord<String, byte[]> r = d.source();
            if (d.record() == null) {
                if (r.offset() >= Math.min(at.graph(), at.vectors())) {
                    deadLetter(r, d.error());
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
            if (!pendingLetters.isEmpty()) {
                // a graph-only sink moves its position with the graph write: what it dead-letters is written first
                List<Future<RecordMetadata>> letters = new ArrayList<>(pendingLetters);
                pendingLetters.clear();
                acknowledged(letters);
            }
            Map<MirrorRecord, String> graphRejected = new LinkedHashMap<>();
            if (graph != null && (!toGraph.isEmpty() || at.graph() < next)) {
                graphRejected.putAll(writeGraph(tp, toGraph, next));
                if (graphRejected.isEmpty()) {
                    // else Neo4j's position stays, so that a batch read again (after a pause, a restart) reports the
                    // rejections again until they are acknowledged
                    positions.put(tp, new Neo4jMirror.Position(next, at.vectors()));
                }
            }
            toVectors.removeAll(graphRejected.keySet());
            Map<MirrorRecord, String> vectorRejected = new LinkedHashMap<>();
            Map<MirrorRecord, List<String>> points = new LinkedHashMap<>();
            if (vectors != null && !toVectors.isEmpty()) {
                vectorRejected.putAll(writeVectors(toVectors));
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
                retrying(Meters.Sink.NEO4J, () -> {
                    graph.undo(vectorRejected.keySet());
                    return null;
                });
            }
            if (vectors != null && !graphRejected.isEmpty()) {
                retrying(Meters.Sink.QDRANT, () -> {
                    vectors.undo(graphRejected.keySet());
                    return null;
                });
            }
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            report(graphRejected, Compensation.Sink.NEO4J, sent);
            report(vectorRejected, Compensation.Sink.QDRANT, sent);
            reportRepairs(toGraph.isEmpty() ? toVectors : toGraph, graphRejected, vectorRejected, sent);
            acknowledged(sent);
            if (graph != null && vectors != null) {
                retrying(Meters.Sink.NEO4J, () -> {
                    graph.writeBack(points, settings.group(), tp.topic(), tp.partition(), next);
                    return null;
                });
            } else if (graph != null) {
                if (!graphRejected.isEmpty()) {
                    retrying(
                            Meters.Sink.NEO4J,
                            () -> graph.apply(List.of(), settings.group(), tp.topic(), tp.partition(), next, true));
                }
            } else {
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(next)));
            }
            positions.put(tp, new Neo4jMirror.Position(next, next));
            if (graph != null) {
                toCommit.put(tp, new OffsetAndMetadata(next));
            }
            return true;
        } catch (Paused e) {
            LOG.warn(
                    "mirror sink pauses partition {} for {} after transient failures: {}",
                    tp,
                    settings.pause(),
                    SinkFailure.reason(e.getCause()));
            consumer.pause(List.of(tp));
            consumer.seek(tp, first);
            pausedUntil.put(tp, clock.instant().plus(settings.pause()));
            if (oldestPending == null) {
                oldestPending = Instant.ofEpochMilli(batch.get(0).timestamp());
            }
            return false;
        }
    }

    private Map<MirrorRecord, String> writeGraph(TopicPartition tp, List<MirrorRecord> records, long next) {
        long started = System.nanoTime();
        try {
            long applied = splittable(
                    Meters.Sink.NEO4J,
                    () -> graph.apply(records, settings.group(), tp.topic(), tp.partition(), next, vectors == null));
            meters.sinkWrite(Meters.Sink.NEO4J, records.size(), true, Duration.ofNanos(System.nanoTime() - started));
            meters.sinkRecords(
                    Meters.Sink.NEO4J, Meters.SinkRecordOutcome.APPLIED, (int) Math.min(applied, records.size()));
            meters.sinkRecords(Meters.Sink.NEO4J, Meters.SinkRecordOutcome.SUPERSEDED, (int)
                    Math.max(0, records.size() - applied));
            return Map.of();
        } catch (Rejection | TooBig e) {
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
            retrying(
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
            return splittable(Meters.Sink.NEO4J, () -> graph.apply(records));
        } catch (Rejection | TooBig e) {
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

    private Map<MirrorRecord, String> writeVectors(List<MirrorRecord> records) {
        long started = System.nanoTime();
        try {
            Map<MirrorRecord, String> rejected = vectorsInParts(records);
            meters.sinkWrite(Meters.Sink.QDRANT, records.size(), true, Duration.ofNanos(System.nanoTime() - started));
            meters.sinkRecords(Meters.Sink.QDRANT, Meters.SinkRecordOutcome.APPLIED, records.size() - rejected.size());
            return rejected;
        } catch (Rejection e) {
            // the vector mirror isolates the points it refuses itself; a refusal of the whole batch (a collection
            // gone, a request refused) says nothing against the records: wait and try again
            meters.sinkWrite(Meters.Sink.QDRANT, records.size(), false, Duration.ofNanos(System.nanoTime() - started));
            meters.sinkPause(Meters.Sink.QDRANT);
            throw new Paused(e.getCause());
        }
    }

    /**
     * Writes {@code records} to the vector mirror: at once, else (failed in a way a smaller batch may avoid) each half
     * in turn, down to single records, rejected as {@link #graphInParts} rejects them. Returns the records the mirror
     * refused.
     */
    private Map<MirrorRecord, String> vectorsInParts(List<MirrorRecord> records) {
        try {
            return splittable(Meters.Sink.QDRANT, () -> vectors.apply(records));
        } catch (TooBig e) {
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
        if (e instanceof TooBig && SinkFailure.sizeBound(e.getCause()) != SinkFailure.Size.SURELY) {
            meters.sinkPause(sink);
            throw new Paused(e.getCause());
        }
    }

    /** A write that failed in a way a smaller batch may avoid: split at once, never retried at the same size. */
    static final class TooBig extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooBig(Throwable cause) {
            super(cause);
        }
    }

    /** Like {@link #retrying}, but a failure a smaller batch may avoid is thrown at once as {@link TooBig}. */
    private <T> T splittable(Meters.Sink sink, Supplier<T> op) {
        return retrying(sink, () -> {
            try {
                return op.get();
            } catch (Paused | Rejection | TooBig e) {
                throw e;
            } catch (RuntimeException e) {
                if (SinkFailure.sizeBound(e) != SinkFailure.Size.NONE) {
                    throw new TooBig(e);
                }
                throw e;
            }
        });
    }

    /** A write the store refused (not worth retrying). */
    static final class Rejection extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Rejection(Throwable cause) {
            super(cause);
        }
    }

    /** Runs {@code op}, retrying transient failures with backoff; throws {@link Paused} or {@link Rejection}. */
    private <T> T retrying(Meters.Sink sink, Supplier<T> op) {
        Duration wait = settings.backoff();
        for (int attempt = 0; ; attempt++) {
            try {
                return op.get();
            } catch (Paused | Rejection | TooBig e) {
                throw e;
            } catch (RuntimeException e) {
                if (SinkFailure.permanent(e)) {
                    throw new Rejection(e);
                }
                if (attempt >= settings.retries() || closed.get()) {
                    meters.sinkPause(sink);
                    throw new Paused(e);
                }
                meters.sinkRetry(sink);
                LOG.debug("{} failed (attempt {}), retrying in {}: {}", sink.tag(), attempt + 1, wait, e.toString());
                sleep(wait);
                wait = wait.multipliedBy(2);
                if (wait.compareTo(settings.pause()) > 0) {
                    wait = settings.pause();
                }
            }
        }
    }

    /** Waits until the compensations and dead letters of a batch are written; the batch is not done before. */
    private void acknowledged(List<Future<RecordMetadata>> sent) {
        if (sent.isEmpty()) {
            return;
        }
        producer.flush();
        for (Future<RecordMetadata> f : sent) {
            try {
                f.get(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Paused(e);
            } catch (ExecutionException | TimeoutException e) {
                throw new Paused(e);
            }
        }
    }

    private void report(Map<MirrorRecord, String> rejected, Compensation.Sink sink, List<Future<RecordMetadata>> sent) {
        rejected.forEach((r, reason) -> {
            LOG.warn(
                    "{} rejected {} {} of namespace {}: {}",
                    sink,
                    r.kind().wireName(),
                    SinkFailure.abbreviated(r.id()),
                    r.namespace(),
                    reason);
            sent.add(send(r, sink, Compensation.Outcome.COMPENSATED, reason));
            meters.sinkCompensation(
                    sink == Compensation.Sink.NEO4J ? Meters.Sink.NEO4J : Meters.Sink.QDRANT,
                    Meters.CompensationOutcome.COMPENSATED);
        });
    }

    private void reportRepairs(
            Collection<MirrorRecord> written,
            Map<MirrorRecord, String> graphRejected,
            Map<MirrorRecord, String> vectorRejected,
            List<Future<RecordMetadata>> sent) {
        for (MirrorRecord r : written) {
            if (r.repair() && !graphRejected.containsKey(r) && !vectorRejected.containsKey(r)) {
                Compensation.Sink sink = vectors != null ? Compensation.Sink.QDRANT : Compensation.Sink.NEO4J;
                sent.add(send(r, sink, Compensation.Outcome.REPAIRED, ""));
                meters.sinkCompensation(
                        vectors != null ? Meters.Sink.QDRANT : Meters.Sink.NEO4J, Meters.CompensationOutcome.REPAIRED);
            }
        }
    }

    private Future<RecordMetadata> send(
            MirrorRecord r, Compensation.Sink sink, Compensation.Outcome outcome, String reason) {
        Compensation c = new Compensation(
                r.namespace(),
                r.version(),
                sink,
                r.kind(),
                r.deleted() ? "delete" : "upsert",
                r.id(),
                outcome,
                reason,
                settings.retries() + 1,
                clock.instant());
        return producer.send(new ProducerRecord<>(settings.compensationsTopic(), r.namespace(), Json.toBytes(c)));
    }

    /** The fields of an object that hold its vectors (see the mirror schema). */
    private static final List<String> VECTOR_FIELDS = List.of("vector", "memory_vector");

    /**
     * Decodes and validates one record; runs on the decoding thread. Without a vector mirror an object's vectors are
     * checked by the schema (a string or null: their base64 is not) but not decoded, as nothing would read them.
     */
    private static Decoded decode(ConsumerRecord<String, byte[]> r, boolean withVectors) {
        try {
            if (r.value() == null) {
                throw new IllegalArgumentException("null value");
            }
            JsonNode tree = Json.strictTrees().readTree(r.value());
            if (tree == null || !tree.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            if (!withVectors && tree.get("object") instanceof ObjectNode object) {
                for (String field : VECTOR_FIELDS) {
                    // not decoded, as nothing would read them; what they hold must still be a vector's text or null
                    JsonNode v = object.get(field);
                    if (v != null && !v.isTextual() && !v.isNull()) {
                        throw new IllegalArgumentException("'" + field + "' is neither base64 text nor null");
                    }
                    if (v != null) {
                        object.putNull(field);
                    }
                }
            }
            return new Decoded(r, Json.bindInternal(tree, MirrorRecord.class), null);
        } catch (IOException e) {
            return new Decoded(r, null, "not a mirror record: " + Json.problem(e));
        } catch (RuntimeException e) {
            return new Decoded(r, null, "not a mirror record: " + e.getMessage());
        }
    }

    private void deadLetter(ConsumerRecord<String, byte[]> r, String reason) {
        DeadLetter letter = DeadLetter.of(
                DeadLetter.Stage.MIRROR,
                DeadLetter.Cause.UNDECODABLE,
                reason,
                r.topic(),
                r.partition(),
                r.offset(),
                r.key() == null ? null : r.key().getBytes(UTF_8),
                r.value(),
                clock.instant());
        pendingLetters.add(
                producer.send(new ProducerRecord<>(settings.deadLetterTopic(), r.key(), Json.toBytes(letter))));
        meters.deadLetter(DeadLetter.Stage.MIRROR, DeadLetter.Cause.UNDECODABLE);
    }

    private void resumeDue() {
        Instant now = clock.instant();
        List<TopicPartition> due = new ArrayList<>();
        pausedUntil.forEach((tp, until) -> {
            if (!until.isAfter(now)) {
                due.add(tp);
            }
        });
        for (TopicPartition tp : due) {
            if (unpositioned.contains(tp)) {
                if (!position(tp)) {
                    pausedUntil.put(tp, now.plus(settings.pause()));
                    continue;
                }
                unpositioned.remove(tp);
            }
            pausedUntil.remove(tp);
            consumer.resume(List.of(tp));
        }
    }

    /** After an unexpected failure, every assigned partition is read again from where its written effects end. */
    private void rewind() {
        ahead.clear();
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of();
        if (graph == null) {
            committed = consumer.committed(consumer.assignment());
        }
        for (TopicPartition tp : consumer.assignment()) {
            Neo4jMirror.Position p = positions.get(tp);
            if (p != null) {
                seek(tp, vectors == null ? p.graph() : graph == null ? p.vectors() : Math.min(p.graph(), p.vectors()));
            } else if (graph == null) {
                OffsetAndMetadata c = committed.get(tp);
                seek(tp, c == null ? -1 : c.offset());
            } else {
                awaitPosition(tp);
            }
        }
    }

    /**
     * A partition whose position Neo4j could not give (it was away when the partition came): paused, and read from
     * that position once Neo4j gives it ({@link #resumeDue()}), never from wherever the consumer happens to be.
     */
    private void awaitPosition(TopicPartition tp) {
        unpositioned.add(tp);
        consumer.pause(List.of(tp));
        pausedUntil.putIfAbsent(tp, clock.instant().plus(settings.pause()));
    }

    private void seek(TopicPartition tp, long from) {
        if (from >= 0) {
            consumer.seek(tp, from);
        } else {
            consumer.seekToBeginning(List.of(tp));
        }
    }

    /** Loads a partition's position from Neo4j and seeks to it; false when Neo4j cannot be reached. */
    private boolean position(TopicPartition tp) {
        Neo4jMirror.Position p;
        try {
            p = graph.position(settings.group(), tp.topic(), tp.partition());
        } catch (RuntimeException e) {
            LOG.warn("position of {} not readable from Neo4j yet: {}", tp, SinkFailure.reason(e));
            return false;
        }
        placeAt(tp, p, consumer.beginningOffsets(List.of(tp)).getOrDefault(tp, 0L));
        return true;
    }

    /** Reads a partition (whose first record still held is {@code start}) from where Neo4j's position {@code p} says. */
    private void placeAt(TopicPartition tp, Neo4jMirror.Position p, long start) {
        positions.put(tp, p);
        long from = vectors == null ? p.graph() : Math.min(p.graph(), p.vectors());
        checkHistory(tp, from, start);
        seek(tp, from);
    }

    private void updateLag(ConsumerRecords<String, byte[]> polled) {
        try {
            long lag = 0;
            Set<TopicPartition> unknown = new HashSet<>();
            for (TopicPartition tp : consumer.assignment()) {
                // from the last fetch's high watermark, no request to the broker; a paused partition is not
                // fetched, so its watermark is asked for
                OptionalLong known = pausedUntil.containsKey(tp) ? OptionalLong.empty() : consumer.currentLag(tp);
                if (known.isPresent()) {
                    lag += known.getAsLong();
                } else {
                    unknown.add(tp);
                }
            }
            if (!unknown.isEmpty()) {
                for (Map.Entry<TopicPartition, Long> e :
                        consumer.endOffsets(unknown, Duration.ofSeconds(1)).entrySet()) {
                    lag += Math.max(0, e.getValue() - consumer.position(e.getKey(), Duration.ofSeconds(1)));
                }
            }
            lagRecords = lag + pausedUntil.size();
            if (lag == 0 && pausedUntil.isEmpty()) {
                oldestPending = null;
            } else if (oldestPending == null && !polled.isEmpty()) {
                oldestPending = clock.instant();
            }
        } catch (RuntimeException e) {
            LOG.debug("mirror sink lag not measured: {}", e.toString());
        }
    }

    private void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Paused(e);
        }
    }

    /** Positions of newly assigned partitions come from Neo4j when it holds them. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            partitions.forEach(positions::remove);
            partitions.forEach(pausedUntil::remove);
            partitions.forEach(unpositioned::remove);
            partitions.forEach(toCommit::remove);
            ahead.removeIf(b -> partitions.contains(b.tp()));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            Map<TopicPartition, Long> start = consumer.beginningOffsets(partitions);
            if (graph == null) {
                // positions are Kafka's committed offsets (none for a new sink: it starts at the beginning)
                Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(partitions));
                for (TopicPartition tp : partitions) {
                    OffsetAndMetadata c = committed.get(tp);
                    checkHistory(tp, c == null ? -1 : c.offset(), start.getOrDefault(tp, 0L));
                }
                return;
            }
            for (TopicPartition tp : partitions) {
                Neo4jMirror.Position p;
                try {
                    p = retrying(Meters.Sink.NEO4J, () -> graph.position(settings.group(), tp.topic(), tp.partition()));
                } catch (Paused | Rejection e) {
                    LOG.warn(
                            "position of {} not readable from Neo4j yet, the partition waits for it: {}",
                            tp,
                            SinkFailure.reason(e.getCause()));
                    awaitPosition(tp);
                    continue;
                }
                placeAt(tp, p, start.getOrDefault(tp, 0L));
            }
        }
    }

    /**
     * A sink that starts reading a partition after its first records were deleted by retention — down longer than the
     * topic keeps records, or a new mirror of an old cluster — cannot write what it never sees: never silently. It says
     * so loudly, counts it, and the consistency repair brings the mirrors back in step.
     */
    private void checkHistory(TopicPartition tp, long from, long start) {
        if (start > 0 && from < start) {
            meters.mirrorHistoryGap();
            LOG.error(
                    "the mirror topic no longer holds records {}..{} of partition {} that this sink never applied (its"
                            + " retention deleted them): the mirrors miss those changes until the consistency repair"
                            + " runs for the partition's namespaces (POST /v1/namespaces/{ns}/consistency/repair)",
                    Math.max(0, from),
                    start - 1,
                    tp);
        }
    }

    @Override
    public void close() {
        closed.set(true);
        consumer.wakeup();
    }
}
