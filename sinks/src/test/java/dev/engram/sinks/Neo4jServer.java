package dev.engram.sinks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * A real Neo4j server in the test JVM, speaking Bolt on a local port (Neo4j is GPLv3: test scope only, never shipped).
 * One per test JVM; it can be stopped and started again on the same directory and port, as a server that goes away.
 */
public final class Neo4jServer {

    private static Neo4jServer shared;

    private final Path dir;
    private final int port;
    private DatabaseManagementService dbms;

    private Neo4jServer(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    /** The server of this test JVM, started on first use. */
    public static synchronized Neo4jServer shared() {
        if (shared == null) {
            try {
                shared = new Neo4jServer(Files.createTempDirectory("engram-neo4j"), freePort());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            shared.start();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::stop));
        }
        return shared;
    }

    public String uri() {
        return "bolt://localhost:" + port;
    }

    /** The most memory a transaction may use on this server. */
    public static final long TRANSACTION_MEMORY_BYTES = 16L << 20;

    public synchronized void start() {
        if (dbms != null) {
            return;
        }
        dbms = new DatabaseManagementServiceBuilder(dir)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("localhost", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // a hint that cannot be fulfilled fails the statement instead of being ignored with a warning
                .setConfig(GraphDatabaseSettings.cypher_hints_error, true)
                .setConfig(
                        GraphDatabaseSettings.pagecache_memory,
                        Long.getLong("engram.neo4j.pagecache.mb", 32) * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // a transaction may hold this much: the tests write far less, but for the one that shows the sink
                // splitting a batch Neo4j cannot take at once (production servers set db.memory.transaction.max too)
                .setConfig(GraphDatabaseSettings.memory_transaction_max_size, TRANSACTION_MEMORY_BYTES)
                .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofSeconds(1))
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, Duration.ZERO)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(100))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(100))
                .build();
    }

    /**
     * Stops the server, deletes its store and starts it again on an empty one at the same address (benchmarks: every
     * contestant starts from the same empty store, not from one emptied of what the one before wrote).
     */
    public synchronized void restartEmpty() {
        stop();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                if (!f.equals(dir)) {
                    Files.delete(f);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        start();
    }

    public synchronized void stop() {
        if (dbms != null) {
            dbms.shutdown();
            dbms = null;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
