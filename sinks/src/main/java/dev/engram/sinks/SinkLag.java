package dev.engram.sinks;

import dev.engram.metrics.Meters;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far the sink is behind, for its gauges: the records not applied yet and since when some wait. Measured by the
 * sink thread, read by the gauges from other threads.
 */
final class SinkLag {

    /** Logs as the sink does, under one logger. */
    private static final Logger LOG = LoggerFactory.getLogger(MirrorSink.class);

    private final Consumer<String, byte[]> consumer;
    private final SinkPartitions partitions;
    private final Clock clock;

    private volatile long lagRecords;
    private volatile Instant oldestPending;

    SinkLag(Consumer<String, byte[]> consumer, SinkPartitions partitions, Clock clock) {
        this.consumer = consumer;
        this.partitions = partitions;
        this.clock = clock;
    }

    /** Registers the gauges of sink {@code s}: paused or not, records behind, age of the oldest one. */
    void gauges(Meters meters, Meters.Sink s) {
        meters.sinkGauges(s, this, m -> m.partitions.paused() ? 1 : 0, m -> m.lagRecords, SinkLag::lagSeconds);
    }

    /** Seconds since the oldest record not yet written was produced; the field is read once, as it may be cleared. */
    private double lagSeconds() {
        Instant oldest = oldestPending;
        return oldest == null ? 0 : Duration.between(oldest, clock.instant()).toMillis() / 1000.0;
    }

    /** Records waiting since {@code timestampMillis} were not applied, unless older ones wait already. */
    void pendingSince(long timestampMillis) {
        if (oldestPending == null) {
            oldestPending = Instant.ofEpochMilli(timestampMillis);
        }
    }

    /** Measures the lag after a poll that returned {@code polled}. */
    void update(ConsumerRecords<String, byte[]> polled) {
        try {
            long lag = 0;
            Set<TopicPartition> unknown = new HashSet<>();
            for (TopicPartition tp : consumer.assignment()) {
                // from the last fetch's high watermark, no request to the broker; a paused partition is not
                // fetched, so its watermark is asked for
                OptionalLong known = partitions.paused(tp) ? OptionalLong.empty() : consumer.currentLag(tp);
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
            lagRecords = lag + partitions.pausedCount();
            if (lag == 0 && !partitions.paused()) {
                oldestPending = null;
            } else if (oldestPending == null && !polled.isEmpty()) {
                oldestPending = clock.instant();
            }
        } catch (RuntimeException e) {
            LOG.debug("mirror sink lag not measured: {}", e.toString());
        }
    }
}
