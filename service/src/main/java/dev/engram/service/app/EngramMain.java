package dev.engram.service.app;

import dev.engram.schemas.Json;
import dev.engram.service.cli.Cli;
import dev.engram.service.cli.DemoProbe;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry point: the command line ({@link Cli}) runs {@code run}, which serves with the environment's configuration,
 * or {@code demo}, which also ingests samples, here; the other commands elsewhere.
 */
public final class EngramMain {

    private static final Logger LOG = LoggerFactory.getLogger(EngramMain.class);

    private EngramMain() {}

    public static void main(String[] args) {
        Logs.configure();
        System.exit(Cli.execute(args, System.getenv(), System.out, System.err));
    }

    /**
     * {@code run} (serve as the environment configures, keys required) or {@code demo} (this machine only, without
     * keys, on the embedded broker, with sample documents); returns the exit code once stopped.
     */
    public static int serve(boolean demo, PrintStream out, PrintStream err) {
        String command = demo ? "demo" : "run";
        try {
            EngramConfig config = demo ? EngramConfig.local(System.getenv()) : EngramConfig.fromEnvironment();
            if (demo && !config.kafka().embedded()) {
                err.println("engram demo runs on the embedded broker; unset ENGRAM_BOOTSTRAP_SERVERS");
                return Cli.USAGE;
            }
            serve(config, demo, out);
            return Cli.OK;
        } catch (IllegalArgumentException e) {
            err.println("engram " + command + ": " + e.getMessage());
            return Cli.USAGE;
        } catch (RuntimeException e) {
            err.println("engram " + command + ": failed to start: " + e.getMessage());
            LOG.debug("start failure", e);
            return Cli.FAILED;
        }
    }

    private static void serve(EngramConfig config, boolean demo, PrintStream out) {
        long t0 = System.nanoTime();
        CountDownLatch stopped = new CountDownLatch(1);
        List<AutoCloseable> resources = new ArrayList<>();
        Thread hook = new Thread(
                () -> {
                    closeAll(resources);
                    stopped.countDown();
                },
                "engram-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        EngramConfig effective = config;
        if (config.kafka().embedded()) {
            Path kafkaDir = config.storage().stateDir().resolveSibling("kafka");
            Path kafkaLog = kafkaDir.resolveSibling("kafka.log");
            Logs.brokerTo(kafkaLog);
            EmbeddedKafkaBroker broker =
                    EmbeddedKafkaBroker.start(kafkaDir, config.kafka().embeddedPort(), false);
            resources.add(0, broker);
            effective = config.withBootstrapServers(broker.bootstrapServers());
            out.printf(
                    "engram: embedded Kafka broker at %s (data in %s, its log in %s)%n",
                    broker.bootstrapServers(), kafkaDir, kafkaLog);
        }
        EngramService service = EngramService.start(effective);
        resources.add(0, service);
        String base = "http://localhost:" + service.httpPort();
        try {
            if (!service.awaitRunning(Duration.ofMinutes(2))) {
                throw new IllegalStateException("Kafka Streams did not reach RUNNING: "
                        + service.streams().state());
            }
            out.printf("engram: serving on %s (started in %.1f s)%n", base, (System.nanoTime() - t0) / 1e9);
            if (demo) {
                runDemo(service, base, out);
            }
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void runDemo(EngramService service, String base, PrintStream out) throws InterruptedException {
        List<String> lines = demoDocuments();
        Properties p = new Properties();
        p.putAll(service.config().kafka().clientConfig());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        long t0 = System.nanoTime();
        try (KafkaProducer<String, byte[]> producer =
                new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            for (String line : lines) {
                String id = Json.mapper().readTree(line).get("id").asText();
                producer.send(new ProducerRecord<>(
                        service.topics().documents().name(), id, line.getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        } catch (IOException e) {
            throw new IllegalStateException("demo documents are not valid JSON", e);
        }
        out.printf(
                "engram: produced %d sample documents to topic %s%n",
                lines.size(), service.topics().documents().name());
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        Map<String, Object> stats = Map.of();
        while (System.nanoTime() < deadline) {
            stats = DemoProbe.namespaceStats(base, "demo");
            if (DemoProbe.allVerified(base, "demo", lines.size())) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        Object passages = stats.getOrDefault("passages", 0);
        out.printf(
                "engram: namespace 'demo' holds %s passages and %s entities (ingested in %.1f s)%n",
                passages, stats.getOrDefault("entities", 0), seconds);
        out.println();
        out.printf("Open %s/ in a browser to explore the memory, or try:%n", base);
        out.printf("  curl -s -X POST %s/v1/namespaces/demo/retrieve -H 'Content-Type: application/json' \\%n", base);
        out.println("       -d '{\"query\": \"Who designed the Analytical Engine?\", \"top_k\": 3}'");
        out.printf("  curl -s %s/v1/namespaces/demo/documents/lovelace%n", base);
        out.printf("  curl -s '%s/v1/namespaces/demo/entities?name=Charles%%20Babbage'%n", base);
        out.printf("  curl -s %s/metrics%n", base);
        out.println();
        out.println("Press Ctrl-C to stop.");
    }

    private static List<String> demoDocuments() {
        try (InputStream in = EngramMain.class.getResourceAsStream("/demo/documents.jsonl")) {
            if (in == null) {
                throw new IllegalStateException("demo documents are missing from the classpath");
            }
            return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
                    .lines()
                    .filter(l -> !l.isBlank())
                    .toList();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the demo documents", e);
        }
    }

    private static void closeAll(List<AutoCloseable> resources) {
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                LOG.warn("error while stopping {}: {}", r.getClass().getSimpleName(), e.toString());
            }
        }
    }
}
