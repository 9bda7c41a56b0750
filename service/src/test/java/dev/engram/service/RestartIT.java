package dev.engram.service;

import static dev.engram.service.ItSupport.awaitVerified;
import static dev.engram.service.ItSupport.get;
import static dev.engram.service.ItSupport.send;
import static dev.engram.service.ItSupport.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.MemoryChange;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.Topics;
import dev.engram.topology.Understanders;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Closing and reopening an instance in the middle of an ingest loses nothing and duplicates nothing. */
@ExtendWith(SharedKafkaBroker.class)
class RestartIT {

    private static final String NS = "restart";
    private static final int DOCUMENTS = 24;

    @TempDir
    Path state;

    @Test
    void aRestartMidStreamLosesAndDuplicatesNothing(EmbeddedKafkaBroker broker) throws Exception {
        String id = "restart-" + UUID.randomUUID().toString().substring(0, 8);
        // passages go to an HNSW index on disk from five on: it must come back with the stores after the restart
        EngramConfig config = ItSupport.config(
                broker.bootstrapServers(), id, id + ".", state, 2, Map.of("ENGRAM_ANN_MIN_VECTORS", "5"));
        List<String> ids = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
            EngramService first = EngramService.start(config, Understanders.embedded());
            assertThat(first.awaitRunning(Duration.ofSeconds(60))).isTrue();
            for (int i = 0; i < DOCUMENTS; i++) {
                String doc = "d" + i;
                ids.add(doc);
                send(
                        producer,
                        first.topics().documents().name(),
                        doc,
                        upsert(
                                NS,
                                doc,
                                "Report " + i,
                                "Station " + i + " in Vienna measured " + (i * 7) + " millimetres of rain in May."));
            }
            String base = "http://127.0.0.1:" + first.httpPort();
            ItSupport.awaitResponse(
                    Duration.ofSeconds(60),
                    () -> get(base + "/v1/namespaces/" + NS),
                    r -> r.status() == 200 && r.body().path("passages").asInt() >= 5);
            assertThat(retrieve(base, "Station 3 in Vienna")
                            .path("vector_search")
                            .path("passage")
                            .asText())
                    .isEqualTo("hnsw");
            first.close(); // mid-stream: most documents are not in memory yet
        }

        try (EngramService second = EngramService.start(config, Understanders.embedded())) {
            assertThat(second.awaitRunning(Duration.ofSeconds(60))).isTrue();
            String base = "http://127.0.0.1:" + second.httpPort();
            awaitVerified(base, NS, ids);
            ItSupport.Response stats = get(base + "/v1/namespaces/" + NS);
            assertThat(stats.body().path("documents").asInt()).isEqualTo(DOCUMENTS);
            assertThat(stats.body().path("passages").asInt()).isEqualTo(DOCUMENTS);
            JsonNode found = ItSupport.awaitResponse(
                            Duration.ofSeconds(10),
                            () -> ItSupport.post(
                                    base + "/v1/namespaces/" + NS + "/retrieve",
                                    "{\"query\": \"Report 17\\nStation 17 in Vienna measured 119 millimetres of rain in"
                                            + " May.\", \"mode\": \"dense\", \"top_k\": 3}"),
                            r -> r.status() == 200 && r.body().path("results").size() == 3)
                    .body();
            assertThat(found.path("vector_search").path("passage").asText()).isEqualTo("hnsw");
            assertThat(found.path("results").get(0).path("document_id").asText())
                    .isEqualTo("d17");
            assertThat(state.resolve("vector-index").resolve(NS)).isDirectory();

            List<MemoryChange> changes = readChanges(
                    broker.bootstrapServers(), second.topics().memoryChanges().name());
            Map<String, Integer> added = new HashMap<>();
            long previous = 0;
            for (MemoryChange c : changes) {
                assertThat(c.version()).as("versions increase without gaps").isEqualTo(previous + 1);
                previous = c.version();
                if (c instanceof MemoryChange.PassageAdded a) {
                    added.merge(a.passageId(), 1, Integer::sum);
                }
            }
            assertThat(added).hasSize(DOCUMENTS);
            assertThat(added.values()).as("each passage added exactly once").containsOnly(1);

            // Entity state survived too: one Vienna, mentioned once by every passage, created once.
            JsonNode vienna = get(base + "/v1/namespaces/" + NS + "/entities?name=Vienna")
                    .body()
                    .path("entities");
            assertThat(vienna).hasSize(1);
            assertThat(vienna.get(0).path("passage_count").asInt()).isEqualTo(DOCUMENTS);
            assertThat(vienna.get(0).path("mentions").asInt()).isEqualTo(DOCUMENTS);
            String viennaId = vienna.get(0).path("id").asText();
            assertThat(changes)
                    .filteredOn(c -> c instanceof MemoryChange.EntityCreated e
                            && e.entityId().equals(viennaId))
                    .hasSize(1);
        }
    }

    private static JsonNode retrieve(String base, String query) {
        return ItSupport.post(
                        base + "/v1/namespaces/" + NS + "/retrieve",
                        "{\"query\": \"" + query + "\", \"mode\": \"dense\", \"top_k\": 3}")
                .body();
    }

    private static List<MemoryChange> readChanges(String bootstrap, String topic) {
        return ItSupport.readCommitted(
                        bootstrap,
                        topic,
                        new StringDeserializer(),
                        new Topics("").memoryChanges().valueSerde().deserializer(),
                        1,
                        Duration.ofSeconds(20))
                .stream()
                .filter(r -> NS.equals(r.key()))
                .map(r -> r.value())
                .toList();
    }
}
