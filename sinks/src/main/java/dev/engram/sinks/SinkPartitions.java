package dev.engram.sinks;

import dev.engram.metrics.Meters;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the sink stands in each assigned partition: where its written effects end (Neo4j's positions, else Kafka's
 * committed offsets), which partitions are paused and until when, which wait for Neo4j to give their position, and
 * the positions Kafka is told of next. Places, pauses, resumes and rewinds the consumer accordingly, and follows
 * rebalances. Used by the sink thread, but for the paused partitions, which the gauges read from other threads.
 */
final class SinkPartitions {

    /** Logs as the sink does, under one logger. */
    private static final Logger LOG = LoggerFactory.getLogger(MirrorSink.class);

    private static final long COMMIT_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final MirrorSink.Settings settings;
    private final Consumer<String, byte[]> consumer;
    private final Neo4jMirror graph;
    /** Whether the sink has a vector mirror (a partition then resumes from the lower of both positions). */
    private final boolean withVectors;

    private final Meters meters;
    private final Clock clock;
    private final Retries retries;
    /** The sink's polled batches not written yet: dropped with their partition, or all on a rewind. */
    private final Collection<MirrorDecoder.Batch> ahead;

    private final Map<TopicPartition, Neo4jMirror.Position> positions = new HashMap<>();
    /** Paused partitions and when they are tried again; read by the gauges from other threads. */
    private final Map<TopicPartition, Instant> pausedUntil = new ConcurrentHashMap<>();
    /** Assigned partitions whose position Neo4j could not give yet. */
    private final Set<TopicPartition> unpositioned = new HashSet<>();

    /** Positions Kafka is told of next (with Neo4j), and when it was last told. */
    private final Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>();

    private long lastCommitNanos;

    /** @param graph the graph mirror, or null without Neo4j */
    SinkPartitions(
            MirrorSink.Settings settings,
            Consumer<String, byte[]> consumer,
            Neo4jMirror graph,
            boolean withVectors,
            Meters meters,
            Clock clock,
            Retries retries,
            Collection<MirrorDecoder.Batch> ahead) {
        this.settings = settings;
        this.consumer = consumer;
        this.graph = graph;
        this.withVectors = withVectors;
        this.meters = meters;
        this.clock = clock;
        this.retries = retries;
        this.ahead = ahead;
    }

    /** The listener that places newly assigned partitions and forgets revoked ones. */
    ConsumerRebalanceListener rebalance() {
        return new Rebalance();
    }

    /** True while some partition is paused; safe from any thread. */
    boolean paused() {
        return !pausedUntil.isEmpty();
    }

    /** True while partition {@code tp} is paused; safe from any thread. */
    boolean paused(TopicPartition tp) {
        return pausedUntil.containsKey(tp);
    }

    /** How many partitions are paused; safe from any thread. */
    int pausedCount() {
        return pausedUntil.size();
    }

    /** True when partition {@code tp}'s position is known. */
    boolean positioned(TopicPartition tp) {
        return positions.containsKey(tp);
    }

    /** Where partition {@code tp}'s written effects end in each mirror (nothing written: {@code NONE}). */
    Neo4jMirror.Position at(TopicPartition tp) {
        return positions.getOrDefault(tp, Neo4jMirror.Position.NONE);
    }

    /** Partition {@code tp}'s written effects now end at {@code p}. */
    void moved(TopicPartition tp, Neo4jMirror.Position p) {
        positions.put(tp, p);
    }

    /** A batch of partition {@code tp} is applied up to {@code next} in both mirrors; Kafka is told later. */
    void applied(TopicPartition tp, long next) {
        positions.put(tp, new Neo4jMirror.Position(next, next));
        if (graph != null) {
            toCommit.put(tp, new OffsetAndMetadata(next));
        }
    }

    /** Pauses partition {@code tp} after transient failures, to be read again from offset {@code first}. */
    void pauseAt(TopicPartition tp, long first) {
        consumer.pause(List.of(tp));
        consumer.seek(tp, first);
        pausedUntil.put(tp, clock.instant().plus(settings.pause()));
    }

    /**
     * With Neo4j, a partition's position is kept there, and Kafka's committed offsets only show the sink group's lag
     * to Kafka's tools: committed at most once a second, not after every batch.
     */
    void commitDue() {
        long now = System.nanoTime();
        if (!toCommit.isEmpty() && now - lastCommitNanos >= COMMIT_EVERY_NANOS) {
            consumer.commitAsync(new HashMap<>(toCommit), null);
            toCommit.clear();
            lastCommitNanos = now;
        }
    }

    /** Tells Kafka the last positions as the sink stops, if it can (Neo4j holds them anyway). */
    void commitLast() {
        if (!toCommit.isEmpty()) {
            try {
                consumer.commitSync(toCommit, Duration.ofSeconds(2));
            } catch (RuntimeException e) {
                LOG.debug("last positions not committed to Kafka (Neo4j holds them): {}", e.toString());
            }
        }
    }

    /** Resumes the partitions whose pause is over, once their position is known. */
    void resumeDue() {
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
    void rewind() {
        ahead.clear();
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of();
        if (graph == null) {
            committed = consumer.committed(consumer.assignment());
        }
        for (TopicPartition tp : consumer.assignment()) {
            Neo4jMirror.Position p = positions.get(tp);
            if (p != null) {
                seek(tp, !withVectors ? p.graph() : graph == null ? p.vectors() : Math.min(p.graph(), p.vectors()));
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
    void awaitPosition(TopicPartition tp) {
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
        long from = !withVectors ? p.graph() : Math.min(p.graph(), p.vectors());
        checkHistory(tp, from, start);
        seek(tp, from);
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
                    p = retries.retrying(
                            Meters.Sink.NEO4J, () -> graph.position(settings.group(), tp.topic(), tp.partition()));
                } catch (Retries.Paused | Retries.Rejection e) {
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
}
