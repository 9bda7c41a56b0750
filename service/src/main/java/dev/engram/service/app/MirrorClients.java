package dev.engram.service.app;

import dev.engram.metrics.Meters;
import dev.engram.sinks.MirrorSink;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.QdrantMirror;
import dev.engram.topology.Topics;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The clients of the configured mirrors — Neo4j, Qdrant, and a producer for compensations and dead letters — and the
 * mirror sink over them when this process runs it: inside the service ({@code ENGRAM_MIRROR_SINK=true}, the default),
 * or alone ({@code engram sink}). The sink is one consumer group, {@code <application id>-mirror}, over the mirror
 * topic, reading committed records only.
 */
public final class MirrorClients implements AutoCloseable {

    /** The consumer group of every sink of the deployment, over the mirror topic. */
    static String group(EngramConfig config) {
        return config.kafka().applicationId() + "-mirror";
    }

    final Neo4jMirror graph;
    final QdrantMirror vectors;
    final KafkaProducer<String, byte[]> producer;
    private final MirrorSink sink;
    private Thread thread;

    /** Nothing when no mirror is configured. */
    public static MirrorClients open(EngramConfig config, Topics topics, Meters meters, boolean runSink) {
        EngramConfig.Mirrors m = config.mirrors();
        return m.enabled() ? new MirrorClients(config, topics, meters, runSink) : null;
    }

    private MirrorClients(EngramConfig config, Topics topics, Meters meters, boolean runSink) {
        EngramConfig.Mirrors m = config.mirrors();
        this.graph = m.neo4j() == null ? null : new Neo4jMirror(m.neo4j());
        this.vectors = m.qdrant() == null ? null : new QdrantMirror(m.qdrant());
        Map<String, Object> p = config.kafka().clientConfig();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        if (!runSink) {
            this.sink = null;
            return;
        }
        String group = group(config);
        MirrorSink.Settings settings = new MirrorSink.Settings(
                topics.mirror().name(),
                topics.compensations().name(),
                topics.deadLetters().name(),
                group,
                m.batchSize(),
                m.retries(),
                m.backoff(),
                m.pause());
        Map<String, Object> c = settings.consumerConfig(config.kafka().clientConfig(), EngramService.MAX_RECORD_BYTES);
        this.sink = new MirrorSink(
                settings,
                new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer()),
                producer,
                graph,
                vectors,
                meters,
                Clock.systemUTC());
    }

    /** Starts the sink's thread, when this process runs the sink. */
    public void start() {
        if (sink != null) {
            thread = new Thread(sink, "engram-mirror-sink");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** True while the sink's thread runs. */
    public boolean running() {
        return thread != null && thread.isAlive();
    }

    @Override
    public void close() {
        if (sink != null) {
            sink.close();
            if (thread != null) {
                try {
                    thread.join(Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        producer.close(Duration.ofSeconds(5));
        if (graph != null) {
            graph.close();
        }
        if (vectors != null) {
            vectors.close();
        }
    }
}
