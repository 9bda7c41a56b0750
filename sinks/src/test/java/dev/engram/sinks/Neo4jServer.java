package dev.engram.sinks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.kernel.impl.transaction.log.checkpoint.CheckPointer;
import org.neo4j.kernel.impl.transaction.log.checkpoint.SimpleTriggerInfo;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

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

    /**
     * Flushes the default database's pages and transaction log now (benchmarks: so that whoever writes next does not
     * pay for flushing what came before).
     */
    public synchronized void checkpoint() {
        try {
            ((GraphDatabaseAPI) dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME))
                    .getDependencyResolver()
                    .resolveDependency(CheckPointer.class)
                    .forceCheckPoint(new SimpleTriggerInfo("engram benchmark"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String uri() {
        return "bolt://localhost:" + port;
    }

    public synchronized void start() {
        if (dbms != null) {
            return;
        }
        dbms = new DatabaseManagementServiceBuilder(dir)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("localhost", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, 32L * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofSeconds(1))
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, Duration.ZERO)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(100))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(100))
                .build();
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
