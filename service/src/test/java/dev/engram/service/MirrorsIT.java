package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.Neo4jServer;
import dev.engram.sinks.QdrantStandIn;
import dev.engram.topology.Understanders;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memory mirrored to a real Neo4j (in-process, over Bolt) and to a Qdrant stand-in (Qdrant's gRPC protocol over a real
 * socket: no real Qdrant can run on the build machines), end to end through the real broker: every fault ends in zero
 * drift by the consistency endpoint — Neo4j stopped mid-stream and started again, Qdrant unavailable for a few calls
 * and then gone and back on its port,
 * Qdrant rejecting an object (compensated, then repaired once the cause is gone), an element deleted behind Engram's
 * back (found and repaired) — with updates and deletes in the stream and hostile text arriving intact.
 */
@ExtendWith(SharedKafkaBroker.class)
class MirrorsIT {

    private static final String NS = "mirrored";
    private static final String HOSTILE = "X'}) DETACH DELETE n // \"quoted\" <b>名前</b> 🙂";

    @TempDir
    Path state;

    private Server qdrantServer;

    @Test
    void theMirrorsConvergeThroughEveryFault(EmbeddedKafkaBroker broker) throws Exception {
        QdrantStandIn qdrant = new QdrantStandIn();
        ServerBuilder<?> builder = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
        qdrant.services().forEach(builder::addService);
        qdrantServer = builder.build().start();
        int qdrantPort = qdrantServer.getPort();
        Neo4jServer neo4j = Neo4jServer.shared();
        String id = "mirrors-" + UUID.randomUUID().toString().substring(0, 8);
        EngramConfig config = ItSupport.config(
                broker.bootstrapServers(),
                id,
                id + ".",
                state,
                2,
                Map.of(
                        "ENGRAM_NEO4J_URI", neo4j.uri(),
                        "ENGRAM_NEO4J_USER", "",
                        "ENGRAM_QDRANT_URL", "http://localhost:" + qdrantServer.getPort(),
                        "ENGRAM_QDRANT_COLLECTION_PREFIX", id + "_",
                        "ENGRAM_SINK_RETRIES", "2",
                        "ENGRAM_SINK_BACKOFF_MS", "50",
                        "ENGRAM_SINK_PAUSE_MS", "500",
                        "ENGRAM_SINK_TIMEOUT_MS", "3000",
                        "ENGRAM_MIRROR_REPAIR_INTERVAL_MS", "500"));
        try (EngramService service = EngramService.start(config, Understanders.embedded());
                KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers());
                Neo4jMirror graph = new Neo4jMirror(
                        new Neo4jMirror.Settings(neo4j.uri(), null, null, null, Duration.ofSeconds(10)))) {
            assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
            String base = "http://127.0.0.1:" + service.httpPort();
            String documents = service.topics().documents().name();

            // ingest, with a hostile title, then update and delete
            ItSupport.send(producer, documents, "a", ItSupport.upsert(NS, "a", HOSTILE, "Ada Lovelace wrote Note G."));
            ItSupport.send(
                    producer,
                    documents,
                    "b",
                    ItSupport.upsert(NS, "b", "Babbage", "Charles Babbage designed the Analytical Engine in London."));
            ItSupport.send(producer, documents, "c", ItSupport.upsert(NS, "c", "Turing", "Alan Turing met Ada."));
            ItSupport.awaitVerified(base, NS, List.of("a", "b", "c"));
            ItSupport.send(
                    producer,
                    documents,
                    "b",
                    ItSupport.upsert(
                            NS, "b", "Babbage", "Charles Babbage built the Difference Engine. He lived in London."));
            ItSupport.send(producer, documents, "c", ItSupport.delete(NS, "c"));
            // while an update is read, memory may hold fewer passages for a moment: wait for the final count
            JsonNode report = awaitConsistent(base, 2);
            assertThat(ItSupport.mirrored(report, "qdrant:memory", "passage")).isEqualTo(2);
            assertThat(ItSupport.mirrored(report, "neo4j", "fact")).isPositive();
            assertThat(graph.read("MATCH (d:Document {namespace: $ns, id: 'a'}) RETURN d.title", Map.of("ns", NS))
                            .get(0)
                            .get(0)
                            .asString())
                    .isEqualTo(HOSTILE);

            // Neo4j goes away mid-stream: memory goes on, the sink pauses, and catches up when Neo4j is back
            neo4j.stop();
            ItSupport.send(
                    producer, documents, "d", ItSupport.upsert(NS, "d", "Hopper", "Grace Hopper wrote a compiler."));
            ItSupport.awaitVerified(base, NS, List.of("d"));
            Thread.sleep(1500);
            neo4j.start();
            awaitConsistent(base, 3);

            // Qdrant unavailable for a few calls: retried, nothing lost
            qdrant.failNext.set(4);
            ItSupport.send(producer, documents, "e", ItSupport.upsert(NS, "e", "Navy", "The Navy commissioned ships."));
            ItSupport.awaitVerified(base, NS, List.of("e"));
            report = awaitConsistent(base, 4);
            assertThat(ItSupport.mirrored(report, "qdrant:passage", "passage")).isEqualTo(4);

            // Qdrant goes away mid-stream and comes back on the same port, with what it held
            qdrantServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            ItSupport.send(
                    producer, documents, "e2", ItSupport.upsert(NS, "e2", "Fleet", "The fleet sailed to Malta."));
            ItSupport.awaitVerified(base, NS, List.of("e2"));
            Thread.sleep(1500);
            ServerBuilder<?> again = Grpc.newServerBuilderForPort(qdrantPort, InsecureServerCredentials.create());
            qdrant.services().forEach(again::addService);
            qdrantServer = again.build().start();
            report = awaitConsistent(base, 5);
            assertThat(ItSupport.mirrored(report, "qdrant:passage", "passage")).isEqualTo(5);

            // Qdrant rejects an object: undone in Neo4j, compensated in memory; repaired once the cause is gone
            qdrant.rejectText = "Zanzibar";
            ItSupport.send(producer, documents, "f", ItSupport.upsert(NS, "f", "Isle", "Zanzibar lies off the coast."));
            ItSupport.awaitVerified(base, NS, List.of("f"));
            report = ItSupport.awaitResponse(
                            Duration.ofSeconds(60),
                            () -> ItSupport.get(base + "/v1/namespaces/" + NS + "/consistency"),
                            r -> r.status() == 200
                                    && compensated(r.body(), "passage") > 0
                                    && drifting(r.body()) == 0
                                    && r.body().path("in_flight").asLong() == 0)
                    .body();
            assertThat(ItSupport.mirrored(report, "neo4j", "passage")).isEqualTo(5);
            assertThat(report.path("consistent").asBoolean())
                    .as("a rejected object leaves the mirrors behind memory: not consistent")
                    .isFalse();
            assertThat(report.path("rejected").asLong()).isPositive();
            qdrant.rejectText = null;
            report = ItSupport.awaitResponse(
                            Duration.ofSeconds(60),
                            () -> ItSupport.get(base + "/v1/namespaces/" + NS + "/consistency"),
                            r -> r.status() == 200
                                    && compensated(r.body(), "passage") == 0
                                    && drifting(r.body()) == 0
                                    && r.body().path("in_flight").asLong() == 0)
                    .body();
            assertThat(ItSupport.mirrored(report, "neo4j", "passage")).isEqualTo(6);
            assertThat(ItSupport.mirrored(report, "qdrant:passage", "passage")).isEqualTo(6);

            // an element deleted behind Engram's back is found, and the repair brings it back
            graph.read(
                    "MATCH (p:Passage {namespace: $ns}) WITH p ORDER BY p.id LIMIT 1 DETACH DELETE p RETURN count(*)",
                    Map.of("ns", NS));
            JsonNode drifted = ItSupport.get(base + "/v1/namespaces/" + NS + "/consistency")
                    .body();
            assertThat(drifting(drifted)).isPositive();
            assertThat(drifted.path("consistent").asBoolean()).isFalse();
            assertThat(ItSupport.post(base + "/v1/namespaces/" + NS + "/consistency/repair", "")
                            .status())
                    .isEqualTo(202);
            report = awaitConsistent(base, 6);
            assertThat(ItSupport.mirrored(report, "qdrant:passage", "passage")).isEqualTo(6);

            // the sink's meters are exported, as the dashboard queries them
            String dashboard = Files.readString(Path.of("..", "grafana", "dashboards", "engram.json"));
            Matcher m = Pattern.compile("\\b(engram_sink_[a-z_]+)").matcher(dashboard);
            Set<String> names = new TreeSet<>();
            while (m.find()) {
                names.add(m.group(1));
            }
            assertThat(names).hasSizeGreaterThan(5);
            String metrics = ItSupport.get(base + "/metrics").raw().body();
            for (String name : names) {
                assertThat(metrics).as(name).containsPattern("(?m)^" + name + "[{ ]");
            }
            assertThat(metrics)
                    .containsPattern(
                            "(?m)^engram_sink_compensations_total\\{[^}]*outcome=\"compensated\"[^}]*sink=\"qdrant\"[^}]*\\} [1-9]");
        } finally {
            qdrantServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** Waits until the mirrors agree with memory and Neo4j holds {@code passages} passages. */
    private static JsonNode awaitConsistent(String base, long passages) {
        return ItSupport.awaitResponse(
                        Duration.ofSeconds(90),
                        () -> ItSupport.get(base + "/v1/namespaces/" + NS + "/consistency"),
                        r -> r.status() == 200
                                && r.body().path("consistent").asBoolean()
                                && ItSupport.mirrored(r.body(), "neo4j", "passage") == passages)
                .body();
    }

    private static long drifting(JsonNode report) {
        return report.path("drifting").asLong();
    }

    private static long compensated(JsonNode report, String kind) {
        for (JsonNode check : report.path("checks")) {
            if (check.path("mirror").asText().equals("neo4j")
                    && check.path("kind").asText().equals(kind)) {
                return check.path("compensated").asLong();
            }
        }
        return 0;
    }
}
