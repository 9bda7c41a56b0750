package dev.engram.sinks;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorRecord;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes what the sink tells the rest of the system: compensation events of the records a store rejected and of
 * repaired ones, for memory, and dead letters of records that are no mirror records; and waits until they are written,
 * as a batch is not done before.
 */
final class MirrorReports {

    /** Logs as the sink does, under one logger. */
    private static final Logger LOG = LoggerFactory.getLogger(MirrorSink.class);

    private final MirrorSink.Settings settings;
    private final Producer<String, byte[]> producer;
    private final Meters meters;
    private final Clock clock;
    /** Whether the sink has a vector mirror (it then reports repairs as Qdrant's). */
    private final boolean withVectors;

    private final List<Future<RecordMetadata>> pendingLetters = new ArrayList<>();

    MirrorReports(
            MirrorSink.Settings settings,
            Producer<String, byte[]> producer,
            Meters meters,
            Clock clock,
            boolean withVectors) {
        this.settings = settings;
        this.producer = producer;
        this.meters = meters;
        this.clock = clock;
        this.withVectors = withVectors;
    }

    /** Sends record {@code r} to the dead-letter topic; {@link #acknowledgeLetters()} waits for it. */
    void deadLetter(ConsumerRecord<String, byte[]> r, String reason) {
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

    /** Waits until the dead letters sent so far are written. */
    void acknowledgeLetters() {
        if (!pendingLetters.isEmpty()) {
            List<Future<RecordMetadata>> letters = new ArrayList<>(pendingLetters);
            pendingLetters.clear();
            acknowledged(letters);
        }
    }

    /**
     * Reports the records of a batch that the graph and the vector mirror rejected, and the repairs among the
     * {@code written} records that neither rejected, and waits until the compensations are written.
     */
    void compensate(
            Map<MirrorRecord, String> graphRejected,
            Map<MirrorRecord, String> vectorRejected,
            Collection<MirrorRecord> written) {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        report(graphRejected, Compensation.Sink.NEO4J, sent);
        report(vectorRejected, Compensation.Sink.QDRANT, sent);
        reportRepairs(written, graphRejected, vectorRejected, sent);
        acknowledged(sent);
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
                throw new Retries.Paused(e);
            } catch (ExecutionException | TimeoutException e) {
                throw new Retries.Paused(e);
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
                Compensation.Sink sink = withVectors ? Compensation.Sink.QDRANT : Compensation.Sink.NEO4J;
                sent.add(send(r, sink, Compensation.Outcome.REPAIRED, ""));
                meters.sinkCompensation(
                        withVectors ? Meters.Sink.QDRANT : Meters.Sink.NEO4J, Meters.CompensationOutcome.REPAIRED);
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
}
