package dev.engram.service.app;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real single-node Kafka broker (KRaft, combined broker + controller) running in this process: for the
 * one-command demo and for tests. Storage is formatted on first use and reused on restart when persistent.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

    /** The log cleaner's offset map: about 700,000 keys per pass. */
    static final long CLEANER_DEDUPE_BYTES = 16L << 20;

    private final KafkaRaftServer server;
    private final Path dataDir;
    private final boolean deleteOnClose;
    private final String bootstrapServers;

    private EmbeddedKafkaBroker(KafkaRaftServer server, Path dataDir, boolean deleteOnClose, int port) {
        this.server = server;
        this.dataDir = dataDir;
        this.deleteOnClose = deleteOnClose;
        this.bootstrapServers = "127.0.0.1:" + port;
    }

    /** Starts a broker on a free port with storage in a temporary directory deleted on close. */
    public static EmbeddedKafkaBroker startTemporary() {
        try {
            return start(Files.createTempDirectory("engram-kafka-"), 0, true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for the embedded broker", e);
        }
    }

    /**
     * Starts a broker with its storage in {@code dataDir} on {@code port} (0 picks a free one).
     *
     * @param deleteOnClose whether to delete {@code dataDir} when the broker stops
     */
    public static EmbeddedKafkaBroker start(Path dataDir, int port, boolean deleteOnClose) {
        return start(dataDir, port, deleteOnClose, Map.of());
    }

    /**
     * Starts a broker whose client listener requires SASL/PLAIN authentication with one of {@code users} (name →
     * password), as a secured cluster would; without users it is plaintext.
     */
    public static EmbeddedKafkaBroker start(Path dataDir, int port, boolean deleteOnClose, Map<String, String> users) {
        try {
            Files.createDirectories(dataDir);
            int brokerPort = port == 0 ? freePort() : port;
            int controllerPort = freePort();
            String logDir = dataDir.resolve("log").toAbsolutePath().toString();
            Properties props = new Properties();
            props.put("process.roles", "broker,controller");
            props.put("node.id", "1");
            props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
            String client = users.isEmpty() ? "PLAINTEXT" : "SASL_PLAINTEXT";
            props.put("listeners", client + "://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
            props.put("advertised.listeners", client + "://127.0.0.1:" + brokerPort);
            props.put("controller.listener.names", "CONTROLLER");
            props.put("inter.broker.listener.name", client);
            props.put("listener.security.protocol.map", client + ":" + client + ",CONTROLLER:PLAINTEXT");
            if (!users.isEmpty()) {
                // the broker talks to itself as "broker"; clients log in as one of the users
                StringBuilder jaas =
                        new StringBuilder("org.apache.kafka.common.security.plain.PlainLoginModule required"
                                + " username=\"broker\" password=\"broker\" user_broker=\"broker\"");
                users.forEach((user, password) -> jaas.append(" user_")
                        .append(user)
                        .append("=\"")
                        .append(password)
                        .append('"'));
                props.put("sasl.enabled.mechanisms", "PLAIN");
                props.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
                props.put(
                        "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                        jaas.append(';').toString());
            }
            props.put("log.dirs", logDir);
            props.put("num.partitions", "1");
            props.put("auto.create.topics.enable", "false");
            props.put("offsets.topic.replication.factor", "1");
            props.put("offsets.topic.num.partitions", "4");
            props.put("transaction.state.log.replication.factor", "1");
            props.put("transaction.state.log.min.isr", "1");
            props.put("transaction.state.log.num.partitions", "4");
            props.put("share.coordinator.state.topic.replication.factor", "1");
            props.put("share.coordinator.state.topic.min.isr", "1");
            props.put("group.initial.rebalance.delay.ms", "0");
            props.put("log.flush.interval.messages", Long.toString(Long.MAX_VALUE));
            props.put("message.max.bytes", Integer.toString(8 << 20));
            // the log cleaner's map of the latest offset per key, on the heap: 128 MiB by default, sized for a broker
            // of many large compacted topics. One instance's changelogs need far less; the cleaner makes more passes
            // over a segment when it holds more keys than fit
            props.put("log.cleaner.dedupe.buffer.size", Long.toString(CLEANER_DEDUPE_BYTES));
            KafkaConfig config = new KafkaConfig(props, false);

            // Format once: a second format would give the storage a new cluster id that its logs refuse.
            if (!Files.exists(Path.of(logDir, "meta.properties"))) {
                new Formatter()
                        .setPrintStream(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8))
                        .setNodeId(1)
                        .setClusterId(Uuid.randomUuid().toString())
                        .setDirectories(List.of(logDir))
                        .setMetadataLogDirectory(logDir)
                        .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                        .setSupportedFeatures(Feature.PRODUCTION_FEATURES)
                        .setControllerListenerName("CONTROLLER")
                        .run();
            }

            KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
            server.startup();
            return new EmbeddedKafkaBroker(server, dataDir, deleteOnClose, brokerPort);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the embedded Kafka broker", e);
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the embedded Kafka broker: " + e.getMessage(), e);
        }
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        if (deleteOnClose) {
            deleteRecursively(dataDir);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    public static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
