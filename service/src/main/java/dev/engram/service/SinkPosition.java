package dev.engram.service;

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
     * @param end the partition's end (its last stable offset) when the check read memory
     * @param committed the sink group's committed offset when the check read the mirrors (-1 when it has none)
     * @param caughtUp whether the sink had applied every committed record before {@code end} (the offsets between its
     *     position and the end may hold only transaction markers and aborted records)
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
        consumerConfig.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1);
        consumerConfig.remove(ConsumerConfig.GROUP_ID_CONFIG);
        this.topic = topic;
        this.group = group;
        this.partitionOf = partitionOf;
        this.timeout = timeout;
    }

    /** The partition's end now, with the sink's position now; null when the namespace's partition is not known. */
    At now(String ns) throws InterruptedException {
        int partition = partitionOf.applyAsInt(ns);
        if (partition < 0) {
            return null;
        }
        TopicPartition tp = new TopicPartition(topic, partition);
        long end = get(admin.listOffsets(
                                Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                        .partitionResult(tp))
                .offset();
        return at(tp, end);
    }

    /**
     * Waits up to {@code max} for the sink to commit a position at or past {@code target.end()}; the position reached.
     */
    At await(At target, Duration max) throws InterruptedException {
        TopicPartition tp = new TopicPartition(topic, target.partition());
        long deadline = System.nanoTime() + max.toNanos();
        At at = at(tp, target.end());
        while (!at.caughtUp() && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(200);
            at = at(tp, target.end());
        }
        return at;
    }

    private At at(TopicPartition tp, long end) throws InterruptedException {
        long committed = committed(tp);
        return new At(
                topic, tp.partition(), end, committed, committed >= end || nothingCommittedIn(tp, committed, end));
    }

    /**
     * Whether no committed record lies in [{@code from}, {@code end}): the sink commits the offset after the last
     * record it applied, so a transaction marker or an aborted transaction after it would keep it short of the end
     * for ever. Read with an isolation of committed records: they are skipped, and the position passes them.
     */
    private boolean nothingCommittedIn(TopicPartition tp, long from, long end) throws InterruptedException {
        if (from < 0) {
            return end == 0;
        }
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(consumerConfig, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, from);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (!consumer.poll(Duration.ofMillis(200)).isEmpty()) {
                    return false;
                }
            }
            return consumer.position(tp) >= end;
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
