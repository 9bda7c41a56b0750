package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramService;
import dev.engram.topology.TestDocuments;
import dev.engram.topology.Understanders;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker goes away in the middle of the stream and comes back: the instance keeps answering what it has, then
 * reads what was produced after the broker returned, and loses nothing.
 */
class BrokerOutageIT {

    private static final String NS = "outage";

    @TempDir
    Path dir;

    @Test
    void anInstanceOutlivesABrokerThatGoesAwayAndComesBack() throws Exception {
        int port = ItSupport.freePort();
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), port, false);
        try (EngramService service = EngramService.start(
                ItSupport.config(broker.bootstrapServers(), "outage", "outage.", dir.resolve("state"), 1),
                Understanders.embedded())) {
            assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
            String base = "http://127.0.0.1:" + service.httpPort();
            String documents = service.topics().documents().name();
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
                ItSupport.send(
                        producer, documents, "before", TestDocuments.upsert(NS, "before", "B", "Ada wrote Note G."));
            }
            ItSupport.awaitVerified(base, NS, List.of("before"));

            broker.close(); // mid-stream: the instance's clients lose their broker
            TimeUnit.SECONDS.sleep(5);
            assertThat(ItSupport.get(base + "/v1/namespaces/" + NS + "/documents/before")
                            .status())
                    .as("what is in memory is still served while the broker is away")
                    .isEqualTo(200);

            broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), port, false);
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
                ItSupport.send(
                        producer,
                        documents,
                        "after",
                        TestDocuments.upsert(NS, "after", "A", "Grace Hopper wrote the first compiler."));
            }
            ItSupport.awaitVerified(base, NS, List.of("before", "after"));
            assertThat(ItSupport.get(base + "/v1/namespaces/" + NS)
                            .body()
                            .path("documents")
                            .asInt())
                    .isEqualTo(2);
        } finally {
            broker.close();
        }
    }
}
