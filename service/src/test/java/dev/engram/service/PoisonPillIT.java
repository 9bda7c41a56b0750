package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.TestDocuments;
import dev.engram.topology.Understanders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A document the broker accepts but Engram will not (7.5 MB against a 1 MB limit) is dead-lettered, its dead letter
 * fits the producer's limit, and the documents after it on the same partition are read: nothing stalls.
 */
@ExtendWith(SharedKafkaBroker.class)
class PoisonPillIT {

    private static final String NS = "pills";

    @TempDir
    Path state;

    @Test
    void aDocumentTooLargeForEngramButNotForTheBrokerIsDeadLetteredAndTheNextOneIsRead(EmbeddedKafkaBroker broker)
            throws Exception {
        String id = "pill-" + UUID.randomUUID().toString().substring(0, 8);
        // one partition: the documents after the large one queue behind it
        EngramConfig config = ItSupport.config(broker.bootstrapServers(), id, id + ".", state, 1);
        byte[] huge = TestDocuments.upsert(NS, "huge", "Huge", "word ".repeat(1_500_000));
        assertThat(huge.length).isGreaterThan(7 << 20);

        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 8 << 20);
        try (EngramService service = EngramService.start(config, Understanders.embedded());
                KafkaProducer<String, byte[]> producer =
                        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
            String documents = service.topics().documents().name();
            producer.send(new ProducerRecord<>(documents, "huge", huge)).get(30, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>(documents, "tombstone", null)).get(10, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>(
                            documents,
                            "after",
                            TestDocuments.upsert(NS, "after", "After", "Ada Lovelace wrote Note G.")))
                    .get(10, TimeUnit.SECONDS);

            ItSupport.awaitVerified("http://127.0.0.1:" + service.httpPort(), NS, List.of("after"));

            List<DeadLetter> letters = ItSupport.deadLetters(broker.bootstrapServers(), service.topics(), 2);
            assertThat(letters).extracting(DeadLetter::cause).contains(DeadLetter.Cause.NULL_VALUE);
            DeadLetter tooLarge = letters.stream()
                    .filter(l -> l.cause() == DeadLetter.Cause.TOO_LARGE)
                    .findFirst()
                    .orElseThrow();
            assertThat(tooLarge.truncated()).isTrue();
            assertThat(tooLarge.valueBytes()).isEqualTo(huge.length);
            assertThat(tooLarge.valueSha256())
                    .isEqualTo(HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(huge)));
            assertThat(Json.toBytes(tooLarge).length).isLessThan(1 << 20);
            assertThat(new String(Base64.getDecoder().decode(tooLarge.keyBase64()), StandardCharsets.UTF_8))
                    .isEqualTo("huge");
            String metrics = ItSupport.get("http://127.0.0.1:" + service.httpPort() + "/metrics")
                    .raw()
                    .body();
            assertThat(metrics)
                    .containsPattern(
                            "engram_dead_letters_total\\{cause=\"too_large\",stage=\"read\",task=\"[0-9_]+/read-tally\"} 1.0");
            assertThat(ItSupport.get("http://127.0.0.1:" + service.httpPort() + "/v1/health/ready")
                            .status())
                    .isEqualTo(200);
        }
    }

    @Test
    void recordsThatAreNotWhatTheirTopicHoldsAreDeadLetteredAndTheStreamGoesOn(EmbeddedKafkaBroker broker)
            throws Exception {
        String id = "garbage-" + UUID.randomUUID().toString().substring(0, 8);
        EngramConfig config = ItSupport.config(broker.bootstrapServers(), id, id + ".", state, 1);
        try (EngramService service = EngramService.start(config, Understanders.embedded());
                KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
            assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
            byte[] garbage = "not what this topic holds".getBytes(StandardCharsets.UTF_8);
            ItSupport.send(producer, service.topics().passages().name(), "p", garbage);
            ItSupport.send(producer, service.topics().passages().name(), "p-null", null);
            ItSupport.send(producer, service.topics().understandings().name(), NS, garbage);
            ItSupport.send(
                    producer,
                    service.topics().understandings().name(),
                    NS,
                    "{\"kind\": \"nope\"}".getBytes(StandardCharsets.UTF_8));
            ItSupport.send(producer, service.topics().memoryCommands().name(), NS, garbage);
            ItSupport.send(
                    producer,
                    service.topics().documents().name(),
                    "after",
                    TestDocuments.upsert(NS, "after", "After", "Grace Hopper wrote the first compiler."));

            ItSupport.awaitVerified("http://127.0.0.1:" + service.httpPort(), NS, List.of("after"));

            List<DeadLetter> letters = ItSupport.deadLetters(broker.bootstrapServers(), service.topics(), 5);
            assertThat(letters)
                    .as("one dead letter for each record that is not what its topic holds")
                    .hasSize(5);
            assertThat(letters)
                    .filteredOn(
                            l -> l.topic().equals(service.topics().passages().name()))
                    .hasSize(2)
                    .allSatisfy(l -> assertThat(l.stage()).isEqualTo(DeadLetter.Stage.UNDERSTAND));
            assertThat(letters)
                    .filteredOn(l ->
                            l.topic().equals(service.topics().understandings().name()))
                    .hasSize(2)
                    .allSatisfy(l -> {
                        assertThat(l.stage()).isEqualTo(DeadLetter.Stage.CONSTRUCT);
                        assertThat(l.cause()).isEqualTo(DeadLetter.Cause.UNDECODABLE);
                    });
            assertThat(letters)
                    .filteredOn(l ->
                            l.topic().equals(service.topics().memoryCommands().name()))
                    .singleElement()
                    .satisfies(l -> assertThat(l.cause()).isEqualTo(DeadLetter.Cause.BAD_COMMAND));
            assertThat(letters).filteredOn(l -> l.valueBase64() != null).allSatisfy(l -> assertThat(l.valueBytes())
                    .isPositive());
        }
    }
}
