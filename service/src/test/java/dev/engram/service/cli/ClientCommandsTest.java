package dev.engram.service.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientCommandsTest {

    /** Runs a command against an address nothing listens at: whatever it refuses, it refuses before any request. */
    private static int run(String command, List<String> args, StringBuilder err) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        List<String> line = new ArrayList<>(List.of(command));
        line.addAll(args);
        int code = Cli.execute(
                line.toArray(String[]::new),
                Map.of("ENGRAM_URL", "http://127.0.0.1:9"),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        err.append(bytes.toString(StandardCharsets.UTF_8));
        return code;
    }

    @Test
    void unknownRepeatedOrBadOptionsAndHostileNamespacesAreUsageErrorsBeforeAnythingIsWritten(@TempDir Path dir)
            throws Exception {
        Path doc = Files.writeString(dir.resolve("a.txt"), "Ada Lovelace wrote Note G.");
        Path state = dir.resolve("state");
        Object[][] cases = {
            {
                "ingest",
                List.of("--namespace", "ns", "--bogus", "x", doc.toString()),
                "engram ingest: Unknown option: '--bogus'"
            },
            {"query", List.of("--namespace", "ns", "--bogus", "1", "who"), "Unknown option: '--bogus'"},
            {"query", List.of("--namespace", "ns", "--top-k", "1", "--top-k", "2", "who"), "only once"},
            {"query", List.of("--namespace", "ns", "--json", "maybe", "who"), "'maybe' is not a boolean"},
            {"query", List.of("--namespace", "ns", "--top-k", "0", "who"), "--top-k must be an integer from 1"},
            {"ingest", List.of("--namespace", "ns", "--concurrency", "65", doc.toString()), "--concurrency"},
            {"ingest", List.of("--namespace", "ns"), "Missing required parameter: 'PATH'"},
            {"query", List.of("who"), "Missing required option: '--namespace=NS'"},
            {"status", List.of("extra", "args"), "Unmatched arguments"},
            {"ingest", List.of("--namespace", "../pwned", "--state", state.toString(), doc.toString()), "--namespace"},
            {"ingest", List.of("--namespace", "../pwned", doc.toString()), "--namespace"},
            {"query", List.of("--namespace", "a/b", "who"), "--namespace"},
            {"status", List.of("--namespace", ""), "--namespace"}
        };
        for (Object[] c : cases) {
            StringBuilder err = new StringBuilder();
            @SuppressWarnings("unchecked")
            int code = run((String) c[0], (List<String>) c[1], err);
            assertThat(code).as("%s %s", c[0], c[1]).isEqualTo(2);
            assertThat(err.toString()).as("%s %s", c[0], c[1]).contains((String) c[2]);
        }
        StringBuilder err = new StringBuilder();
        assertThat(run("query", List.of("--namespace", "ns", "--", "--force", "who"), err))
                .as("after --, text: sent, to an address where nothing answers")
                .isEqualTo(ClientCommands.UNREACHABLE);
        assertThat(state).doesNotExist();
        assertThat(Path.of(".engram", "pwned.json")).doesNotExist();
    }

    @Test
    void everyCommandAnswersHelpWithItsOptionsAndExitCodes() {
        for (String command : List.of("run", "demo", "eval", "sink", "ingest", "query", "status")) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int code = Cli.execute(
                    new String[] {command, "--help"},
                    Map.of(),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            assertThat(code).as(command).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8))
                    .as(command)
                    .startsWith("Usage: engram " + command)
                    .contains("--help");
        }
        StringBuilder err = new StringBuilder();
        assertThat(run("ingest", List.of("--help"), err)).isZero();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Cli.execute(
                new String[] {"eval", "--help"},
                Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--data=DIR", "--modes=MODE", "--per-question");
        assertThat(run("eval", List.of("--data"), err)).isEqualTo(Cli.USAGE);
        assertThat(err.toString()).contains("engram eval: Missing required parameter for option '--data'");
        assertThat(run("bogus", List.of(), err)).isEqualTo(Cli.USAGE);
    }

    /**
     * Against a stand-in instance (the JDK's HTTP server answering as the API does): a document memory holds, one a
     * later write from elsewhere replaced while the command waited, and one not yet in memory when the wait ended. Only
     * the first is remembered as done, and the command says which is which.
     */
    @Test
    void aDocumentALaterWriteReplacedIsSaidApartAndNotRememberedAsDone(@TempDir Path dir) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            exchange.getRequestBody().readAllBytes();
            int status = 200;
            String body = "{\"passages\": 0}";
            if (exchange.getRequestMethod().equals("PUT")) {
                status = path.endsWith("kept.txt") ? 200 : 202;
                body = path.endsWith("kept.txt")
                        ? "{\"in_memory\": true}"
                        : path.endsWith("replaced.txt")
                                ? "{\"in_memory\": false, \"superseded\": true}"
                                : "{\"in_memory\": false}";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        try {
            Path docs = Files.createDirectories(dir.resolve("docs"));
            for (String name : List.of("kept", "replaced", "slow")) {
                Files.writeString(docs.resolve(name + ".txt"), "Ada Lovelace wrote Note G, " + name + ".");
            }
            Path state = dir.resolve("state.json");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = Cli.execute(
                    new String[] {"ingest", "--namespace", "ns", "--state", state.toString(), docs.toString()},
                    Map.of(
                            "ENGRAM_URL",
                            "http://127.0.0.1:" + server.getAddress().getPort()),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));

            assertThat(code).isEqualTo(ClientCommands.NOT_YET);
            assertThat(err.toString(StandardCharsets.UTF_8))
                    .containsPattern("replaced in memory by a later write of id '[^']*replaced.txt'")
                    .containsPattern("not yet in memory: .*slow.txt");
            assertThat(out.toString(StandardCharsets.UTF_8))
                    .contains("1 in memory, 0 unchanged, 1 not yet in memory, 1 replaced by later writes");
            assertThat(Files.readString(state))
                    .contains("kept.txt")
                    .doesNotContain("replaced.txt")
                    .doesNotContain("slow.txt");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aStateFileThatCannotBeReadIsSaidInWords(@TempDir Path dir) throws Exception {
        Path doc = Files.writeString(dir.resolve("a.txt"), "Ada Lovelace wrote Note G.");
        StringBuilder err = new StringBuilder();
        int code = run("ingest", List.of("--namespace", "ns", "--state", dir.toString(), doc.toString()), err);
        assertThat(code).isNotZero();
        assertThat(err.toString()).contains("cannot read the state file " + dir).doesNotContain("Exception");
    }

    @Test
    void thePipelineLineReadsEachStepsLagAndTheOutcomesFromTheMetrics() {
        String scrape = """
                # HELP kafka_consumer_fetch_manager_records_lag_max The max lag
                # TYPE kafka_consumer_fetch_manager_records_lag_max gauge
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-ingest-1b2c-StreamThread-1-consumer",kafka_version="4.3.1"} 12.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-ingest-1b2c-StreamThread-2-consumer",kafka_version="4.3.1"} 40.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-9f8e-StreamThread-1-consumer",kafka_version="4.3.1"} 3.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-9f8e-global-consumer",kafka_version="4.3.1"} 900.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-9f8e-StreamThread-2-consumer",kafka_version="4.3.1"} NaN
                engram_documents_total{outcome="upserted"} 7.0
                engram_documents_total{outcome="unchanged"} 0.0
                engram_documents_total{outcome="deleted"} 2.0
                engram_dead_letters_total{cause="malformed_json",stage="read"} 1.0
                engram_dead_letters_total{cause="schema",stage="read"} 2.0
                engram_dead_letters_total{cause="error",stage="construct"} 1.0
                """;

        ClientCommands.Pipeline p = ClientCommands.Pipeline.of(scrape);

        assertThat(p.ingestLag()).isEqualTo(40.0);
        assertThat(p.memoryLag()).isEqualTo(3.0); // the global store's consumer is not a step; NaN is no value
        assertThat(p.documents()).isEqualTo(Map.of("upserted", 7L, "deleted", 2L));
        assertThat(p.deadLetters()).isEqualTo(Map.of("read", 3L, "construct", 1L));
        assertThat(p.sinks()).isEqualTo("none on this instance");
        assertThat(ClientCommands.Pipeline.of(
                                "engram_sink_lag_records{sink=\"neo4j\"} 5\nengram_sink_paused{sink=\"neo4j\"} 1\n")
                        .sinks())
                .isEqualTo("5 mirror records behind, 1 partitions paused");
    }
}
