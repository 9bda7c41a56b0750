package dev.engram.service.app;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far the read step has got in the documents topic: the offsets its consumer group has committed (with exactly-once
 * processing, what it has processed and written), read at most every {@link #FRESH} however many writers wait.
 */
final class ReadProgress implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ReadProgress.class);
    static final Duration FRESH = Duration.ofMillis(100);

    private final Admin admin;
    private final String group;
    private Map<TopicPartition, Long> committed = Map.of();
    private long readAt = Long.MIN_VALUE;

    /** The Kafka admin client it reads positions with, which others share. */
    Admin admin() {
        return admin;
    }

    ReadProgress(Admin admin, String group) {
        this.admin = admin;
        this.group = group;
    }

    /** The next offset the read step takes from the partition, or −1 while unknown. */
    synchronized long committed(TopicPartition partition) {
        long now = System.nanoTime();
        if (readAt == Long.MIN_VALUE || now - readAt >= FRESH.toNanos()) {
            try {
                Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                        .partitionsToOffsetAndMetadata()
                        .get(5, TimeUnit.SECONDS);
                Map<TopicPartition, Long> next = new HashMap<>();
                offsets.forEach((tp, o) -> {
                    if (o != null) {
                        next.put(tp, o.offset());
                    }
                });
                committed = next;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                LOG.debug("could not read the offsets of group {}: {}", group, e.toString());
            }
            readAt = now;
        }
        return committed.getOrDefault(partition, -1L);
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
