package dev.engram.service;

import static dev.engram.service.ItSupport.awaitVerified;
import static dev.engram.service.ItSupport.post;
import static dev.engram.service.ItSupport.send;
import static dev.engram.service.ItSupport.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.Understanders;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;

/** The integration path against a containerized Apache Kafka broker; skipped where Docker is not available. */
@Testcontainers(disabledWithoutDocker = true)
class KafkaContainerIT {

    @Container
    static final KafkaContainer KAFKA = new KafkaContainer("apache/kafka:4.1.1");

    @TempDir
    Path stateDir;

    @Test
    void producesDocumentsAndRetrievesThemOverHttp() throws Exception {
        EngramConfig config = ItSupport.config(KAFKA.getBootstrapServers(), "tc", "tc.", stateDir, 2);
        try (EngramService service = EngramService.start(config, Understanders.embedded());
                KafkaProducer<String, byte[]> producer = ItSupport.producer(KAFKA.getBootstrapServers())) {
            assertThat(service.awaitRunning(Duration.ofSeconds(90))).isTrue();
            String base = "http://127.0.0.1:" + service.httpPort();
            send(
                    producer,
                    service.topics().documents().name(),
                    "a",
                    upsert("tc", "a", "Ada", "Ada Lovelace wrote Note G."));
            awaitVerified(base, "tc", List.of("a"));

            assertThat(post(base + "/v1/namespaces/tc/retrieve", "{\"query\": \"Note G\"}")
                            .body()
                            .path("results")
                            .get(0)
                            .path("document_id")
                            .asText())
                    .isEqualTo("a");
        }
    }
}
