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
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.neo4j.driver.Record;

/**
 * The mirror sink as its own process ({@code engram sink}, the packaged service), killed with SIGKILL between the
 * graph write and the vector write: Neo4j holds the batch and has moved its graph position, Qdrant holds nothing of
 * it. The sink started again resumes from the positions kept in Neo4j, writes the vectors and the references, and the
 * consistency endpoint of the serving instance (which runs no sink itself) finds no drift. Neo4j is real (in-process,
 * over Bolt); Qdrant is the protocol stand-in, which holds the killed process's upsert unanswered.
 */
@ExtendWith(SharedKafkaBroker.class)
class SinkKillIT {

    private static final String NS = "killed";

    @TempDir
    Path state;

    @Test
    void aSinkKilledBetweenTheGraphAndTheVectorWriteResumesWithoutDrift(EmbeddedKafkaBroker broker) throws Exception {
        QdrantStandIn qdrant = new QdrantStandIn();
        ServerBuilder<?> builder = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
        qdrant.services().forEach(builder::addService);
        Server qdrantServer = builder.build().start();
        Neo4jServer neo4j = Neo4jServer.shared();
        String id = "sinkkill-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, String> mirrors = Map.of(
                "ENGRAM_NEO4J_URI",
                neo4j.uri(),
                "ENGRAM_NEO4J_USER",
                "",
                "ENGRAM_QDRANT_URL",
                "http://localhost:" + qdrantServer.getPort(),
                "ENGRAM_QDRANT_COLLECTION_PREFIX",
                id + "_",
                "ENGRAM_SINK_TIMEOUT_MS",
                "60000",
                "ENGRAM_MIRROR_REPAIR_INTERVAL_MS",
                "500");
        Map<String, String> serving = new HashMap<>(mirrors);
        serving.put("ENGRAM_MIRROR_SINK", "false");
        EngramConfig config = ItSupport.config(broker.bootstrapServers(), id, id + ".", state, 2, serving);
        Map<String, String> sinkEnv = ItSupport.environment(
                broker.bootstrapServers(), id, id + ".", state.resolve("sink"), 2, ItSupport.freePort());
        sinkEnv.putAll(mirrors);
        String group = id + "-mirror";
        try (EngramService service = EngramService.start(config, Understanders.embedded());
                KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers());
                Neo4jMirror graph = new Neo4jMirror(
                        new Neo4jMirror.Settings(neo4j.uri(), null, null, null, Duration.ofSeconds(10)))) {
            assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
            String base = "http://127.0.0.1:" + service.httpPort();
            String documents = service.topics().documents().name();
            ItSupport.send(producer, documents, "a", ItSupport.upsert(NS, "a", "Ada", "Ada Lovelace wrote Note G."));
            ItSupport.send(
                    producer,
                    documents,
                    "b",
                    ItSupport.upsert(NS, "b", "Babbage", "Charles Babbage designed the Analytical Engine."));
            ItSupport.awaitVerified(base, NS, List.of("a", "b"));

            // the sink writes the graph, then hangs on the vector write: killed there
            qdrant.holdUpserts = true;
            ServiceProcess sink = ServiceProcess.start(
                    sinkEnv, ServiceProcess.LOGS.resolve(id + "-sink-1.log"), "sink", "/v1/health");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (qdrant.held.get() == 0 && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            assertThat(qdrant.held.get())
                    .as("the sink reached the vector write")
                    .isPositive();
            sink.process().destroyForcibly(); // SIGKILL: no shutdown hook, nothing flushed
            assertThat(sink.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            qdrant.holdUpserts = false;

            List<Record> offsets = graph.read(
                    "MATCH (o:EngramOffset {group: $group}) WHERE o.graph > coalesce(o.vectors, -1) RETURN o",
                    Map.of("group", group));
            assertThat(offsets)
                    .as("the graph position is ahead of the vector position")
                    .isNotEmpty();
            JsonNode torn = ItSupport.get(base + "/v1/namespaces/" + NS + "/consistency")
                    .body();
            assertThat(torn.path("consistent").asBoolean()).isFalse();
            // the sink is gone with records of memory it has not applied: in flight, not drift
            assertThat(torn.path("position").path("caught_up").asBoolean()).isFalse();
            assertThat(torn.path("position").path("committed").asLong())
                    .isLessThan(torn.path("position").path("end").asLong());
            assertThat(torn.path("in_flight").asLong()).isPositive();
            assertThat(torn.path("drifting").asLong()).isZero();
            assertThat(ItSupport.mirrored(torn, "neo4j", "passage")).isPositive();
            assertThat(ItSupport.mirrored(torn, "qdrant:passage", "passage")).isZero();

            // started again, it resumes where Neo4j says and ends with the three stores in agreement
            sink = ServiceProcess.start(sinkEnv, ServiceProcess.LOGS.resolve(id + "-sink-2.log"), "sink", "/v1/health");
            try {
                JsonNode report = ItSupport.awaitResponse(
                                Duration.ofSeconds(90),
                                () -> ItSupport.get(base + "/v1/namespaces/" + NS + "/consistency"),
                                // the stores can agree a moment before the sink commits its position past them
                                r -> r.status() == 200
                                        && r.body().path("consistent").asBoolean()
                                        && r.body()
                                                .path("position")
                                                .path("caught_up")
                                                .asBoolean())
                        .body();
                assertThat(report.path("drifting").asLong()).isZero();
                assertThat(report.path("in_flight").asLong()).isZero();
                assertThat(report.path("position").path("caught_up").asBoolean())
                        .isTrue();
                assertThat(ItSupport.mirrored(report, "qdrant:passage", "passage"))
                        .isEqualTo(ItSupport.mirrored(report, "neo4j", "passage"));
                // and every passage in Neo4j records its Qdrant points (the reference write-back)
                long unreferenced = -1;
                for (int i = 0; i < 300 && unreferenced != 0; i++) {
                    unreferenced = graph.read(
                                    "MATCH (p:Passage {namespace: $ns}) WHERE p.qdrantPoints IS NULL RETURN count(p)",
                                    Map.of("ns", NS))
                            .get(0)
                            .get(0)
                            .asLong();
                    TimeUnit.MILLISECONDS.sleep(100);
                }
                assertThat(unreferenced).isZero();
            } finally {
                sink.process().destroy();
                sink.process().waitFor(30, TimeUnit.SECONDS);
            }
        } finally {
            qdrantServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
