package dev.engram.bench;

import dev.engram.metrics.Meters;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramService;
import dev.engram.sinks.MirrorSink;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.topology.Topics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A replay: seconds from the sink's start until Neo4j holds its position past the last record, of which {@code
 * startup} until the sink had its first records (constraints, consumer group join, positions, first fetch).
 */
record SinkReplay(double seconds, double startup, Map<String, Double> cpu) {
    double streaming() {
        return seconds - startup;
    }

    /** Replays the whole mirror topic into Neo4j with a mirror sink of a new group. */
    static SinkReplay run(
            EmbeddedKafkaBroker broker,
            Topics topics,
            Neo4jProcess neo4j,
            int batch,
            Map<TopicPartition, Long> last,
            int expected,
            String group,
            CpuShares cpu)
            throws Exception {
        MirrorSink.Settings settings = new MirrorSink.Settings(
                topics.mirror().name(),
                topics.compensations().name(),
                topics.deadLetters().name(),
                group,
                batch,
                3,
                Duration.ofMillis(100),
                Duration.ofSeconds(1));
        // the service's consumer, with an interceptor that notes when the first records arrive
        Map<String, Object> c = settings.consumerConfig(
                Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                EngramService.MAX_RECORD_BYTES);
        c.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, FirstRecords.class.getName());
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Neo4jMirror graph = SinkBenchmark.graph(neo4j);
                KafkaProducer<String, byte[]> producer =
                        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
                MirrorSink sink = new MirrorSink(
                        settings,
                        new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer()),
                        producer,
                        graph,
                        null,
                        new Meters(registry),
                        Clock.systemUTC())) {
            Thread thread = new Thread(sink, "bench-sink");
            long t0 = System.nanoTime();
            thread.start();
            // the sink counts a batch's records once its transaction, which moves Neo4j's position, has committed;
            // watched in memory, so that finding the end costs Neo4j nothing while the sink writes
            List<Counter> counters = List.copyOf(registry.find(Meters.SINK_RECORDS)
                    .tag("sink", Meters.Sink.NEO4J.tag())
                    .counters());
            long deadline = t0 + TimeUnit.MINUTES.toNanos(10);
            long nextCheck = t0 + TimeUnit.SECONDS.toNanos(5);
            while (counted(counters) < expected) {
                long now = System.nanoTime();
                if (!thread.isAlive() || now > deadline) {
                    throw new IllegalStateException("the sink " + (thread.isAlive() ? "did not finish" : "stopped")
                            + " after " + (long) counted(counters) + " of " + expected + " records");
                }
                // a batch Neo4j rejected is not counted: its records end up compensated, and the position moves
                if (now > nextCheck) {
                    if (caughtUp(graph, group, topics.mirror().name(), last)) {
                        break;
                    }
                    nextCheck = now + TimeUnit.SECONDS.toNanos(5);
                }
                LockSupport.parkNanos(1_000_000);
            }
            long t1 = System.nanoTime();
            if (!caughtUp(graph, group, topics.mirror().name(), last)) {
                throw new IllegalStateException("the sink counted every record but Neo4j's position is behind");
            }
            double seconds = (t1 - t0) / 1e9;
            // before the sink's threads end, so that their CPU is theirs
            Map<String, Double> spent = cpu.secondsByThreadName();
            Long first = FirstRecords.AT.remove(group);
            double startup = first == null ? 0 : (first - t0) / 1e9;
            sink.close();
            thread.join(10_000);
            DistributionSummary batches =
                    registry.find("engram.sink.batch.records").summary();
            Timer writes = registry.find("engram.sink.writes").timer();
            System.err.printf(
                    "replay %s: %.2f s (%.2f s until the first records), %d batches of %.0f records on average,"
                            + " %.2f s in graph writes%n",
                    group,
                    seconds,
                    startup,
                    batches == null ? 0 : batches.count(),
                    batches == null ? 0 : batches.mean(),
                    writes == null ? 0 : writes.totalTime(TimeUnit.SECONDS));
            return new SinkReplay(seconds, startup, spent);
        }
    }

    /** The records a sink has written to Neo4j or found superseded there. */
    private static double counted(List<Counter> counters) {
        double n = 0;
        for (Counter c : counters) {
            n += c.count();
        }
        return n;
    }

    private static boolean caughtUp(Neo4jMirror graph, String group, String topic, Map<TopicPartition, Long> last) {
        for (Map.Entry<TopicPartition, Long> e : last.entrySet()) {
            if (graph.position(group, topic, e.getKey().partition()).graph() <= e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
