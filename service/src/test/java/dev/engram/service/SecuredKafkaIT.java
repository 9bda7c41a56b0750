package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.TestDocuments;
import dev.engram.topology.Understanders;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Engram on a cluster that requires SASL authentication, configured only through ENGRAM_KAFKA_* variables. */
class SecuredKafkaIT {

    private static final String JAAS =
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"engram\" password=\"%s\";";

    @TempDir
    Path dir;

    @Test
    void ingestsAndServesThroughASaslAuthenticatedCluster() throws Exception {
        try (EmbeddedKafkaBroker broker =
                EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0, true, Map.of("engram", "s3cret"))) {
            Map<String, String> security = Map.of(
                    "ENGRAM_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT",
                    "ENGRAM_KAFKA_SASL_MECHANISM", "PLAIN",
                    "ENGRAM_KAFKA_SASL_JAAS_CONFIG", JAAS.formatted("s3cret"));
            EngramConfig config = ItSupport.config(
                    broker.bootstrapServers(), "secured", "secured.", dir.resolve("state"), 1, security);
            assertThat(config.kafka().toString()).doesNotContain("s3cret");

            try (EngramService service = EngramService.start(config, Understanders.embedded());
                    KafkaProducer<String, byte[]> producer = new KafkaProducer<>(
                            clientProperties(broker, "s3cret"), new StringSerializer(), new ByteArraySerializer())) {
                assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
                producer.send(new ProducerRecord<>(
                                service.topics().documents().name(),
                                "ada",
                                TestDocuments.upsert("sec", "ada", "Ada", "Ada Lovelace wrote Note G.")))
                        .get(10, TimeUnit.SECONDS);

                ItSupport.awaitVerified("http://127.0.0.1:" + service.httpPort(), "sec", List.of("ada"));
            }

            Properties wrong = clientProperties(broker, "wrong");
            wrong.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000);
            wrong.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000);
            try (Admin admin = Admin.create(wrong)) {
                assertThatThrownBy(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS))
                        .hasMessageContaining("uthentication");
            }
        }
    }

    private static Properties clientProperties(EmbeddedKafkaBroker broker, String password) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", JAAS.formatted(password));
        return p;
    }
}
