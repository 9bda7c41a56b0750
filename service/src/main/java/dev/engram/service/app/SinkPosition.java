package dev.engram.service.app;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.ToIntFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Where the mirror sink stands on a namespace's partition of the mirror topic: the last committed record memory wrote
 * there ({@code end}) and the sink group's committed position. A consistency check compares the mirrors once the sink
 * has applied everything memory had written when the check read it, and says so.
 */
final class SinkPosition {

    /**
     * @param end the offset after the last record memory had written there when the check read memory
     * @param committed the sink group's committed offset when the check read the mirrors (-1 when it has none)
     * @param caughtUp whether the sink had applied every record before {@code end}
     */
    record At(String topic, int partition, long end, long committed, boolean caughtUp) {}

    private final Admin admin;
    private final Map<String, Object> consumerConfig;
    private final String topic;
    private final String group;
    private final ToIntFunction<String> partitionOf;
    private final Duration timeout;

    /** @param partitionOf the partition of a namespace's records on namespace-keyed topics (-1 when unknown) */
    SinkPosition(
            Admin admin,
            Map<String, Object> clientConfig,
            String topic,
            String group,
            ToIntFunction<String> partitionOf,
            Duration timeout) {
        this.admin = admin;
        this.consumerConfig = new HashMap<>(clientConfig);
        consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumerConfig.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        consumerConfig.remove(ConsumerConfig.GROUP_ID_CONFIG);
        this.topic = topic;
        this.group = group;
        this.partitionOf = partitionOf;
        this.timeout = timeout;
    }

    /**
     * Where memory's records of the namespace end now — the offset after its last committed record — with the sink's
     * position now; null when the namespace's partition is not known.
     */
    At now(String ns) throws InterruptedException {
        int partition = partitionOf.applyAsInt(ns);
        if (partition < 0) {
            return null;
        }
        TopicPartition tp = new TopicPartition(topic, partition);
        long stable = get(admin.listOffsets(
                                Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                        .partitionResult(tp))
                .offset();
        return at(tp, afterLastRecord(tp, stable));
    }

    /** Waits up to {@code max} for the sink to commit a position at or past {@code target.end()}; where it got. */
    At await(At target, Duration max) throws InterruptedException {
        TopicPartition tp = new TopicPartition(topic, target.partition());
        long deadline = System.nanoTime() + max.toNanos();
        At at = target;
        while (!at.caughtUp() && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(200);
            at = at(tp, target.end());
        }
        return at;
    }

    private At at(TopicPartition tp, long end) {
        long committed = committed(tp);
        return new At(topic, tp.partition(), end, committed, committed >= end);
    }

    /**
     * The offset after the last committed record below {@code stable} (the partition's last stable offset), or 0 when
     * there is none. The sink commits the offset after the last record it applied, so the stable offset itself — past
     * a transaction's marker, or past an aborted transaction — is one it may never reach. Read once per check, from the
     * end backwards in widening windows, with an isolation of committed records (markers and aborted records skipped).
     */
    private long afterLastRecord(TopicPartition tp, long stable) throws InterruptedException {
        if (stable == 0) {
            return 0;
        }
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(consumerConfig, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            for (long window = 16; ; window *= 16) {
                long from = Math.max(0, stable - window);
                consumer.seek(tp, from);
                long last = -1;
                long deadline = System.nanoTime() + timeout.toNanos();
                while (consumer.position(tp) < stable) {
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                    if (System.nanoTime() > deadline) {
                        return stable; // the log could not be read in time: the stable offset, never short of it
                    }
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (r.offset() < stable) {
                            last = Math.max(last, r.offset());
                        }
                    }
                }
                if (last >= 0) {
                    return last + 1;
                }
                if (from == 0) {
                    return 0; // only markers and aborted records
                }
            }
        }
    }

    private long committed(TopicPartition tp) {
        Map<TopicPartition, OffsetAndMetadata> offsets =
                get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
        OffsetAndMetadata o = offsets.get(tp);
        return o == null ? -1 : o.offset();
    }

    private <T> T get(KafkaFuture<T> future) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted reading the sink's position", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the sink's position: " + e, e);
        }
    }
}
