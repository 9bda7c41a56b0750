package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.service.app.EmbeddedKafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaBrokerIT {

    @TempDir
    Path dir;

    @Test
    void aRestartedBrokerKeepsItsClusterAndItsRecords() throws Exception {
        try (EmbeddedKafkaBroker first = EmbeddedKafkaBroker.start(dir, 0, false)) {
            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, first.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic("kept", 1, (short) 1)))
                        .all()
                        .get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(first.bootstrapServers())) {
                ItSupport.send(producer, "kept", "k", "before the restart".getBytes(StandardCharsets.UTF_8));
            }
        }

        try (EmbeddedKafkaBroker second = EmbeddedKafkaBroker.start(dir, 0, false)) {
            List<ConsumerRecord<String, String>> records = ItSupport.readCommitted(
                    second.bootstrapServers(),
                    "kept",
                    new StringDeserializer(),
                    new StringDeserializer(),
                    1,
                    Duration.ofSeconds(30));

            assertThat(records).extracting(ConsumerRecord::value).containsExactly("before the restart");
        }
    }
}
