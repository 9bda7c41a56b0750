package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.KafkaSetup;
import dev.engram.topology.Topics;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Engram refuses to start over topics keyed by namespace whose partition count is not {@code ENGRAM_PARTITIONS}, and
 * says what fixes it: a command keyed by its namespace would land on another partition than the namespace's memory.
 */
@ExtendWith(SharedKafkaBroker.class)
class TopicPartitionsIT {

    @TempDir
    Path state;

    @Test
    void topicsMadeWithAnotherCountAreRefusedWithTheSettingThatFitsThem(EmbeddedKafkaBroker broker) throws Exception {
        String prefix = "parts-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Topics topics = new Topics(prefix);
        try (Admin admin =
                Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(
                            new NewTopic(topics.understandings().name(), 3, (short) 1),
                            new NewTopic(topics.memoryCommands().name(), 3, (short) 1),
                            new NewTopic(topics.compensations().name(), 3, (short) 1),
                            new NewTopic(topics.memoryChanges().name(), 3, (short) 1),
                            new NewTopic(topics.mirror().name(), 3, (short) 1)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
        EngramConfig two = ItSupport.config(broker.bootstrapServers(), "parts", prefix, state, 2);
        assertThatThrownBy(() -> KafkaSetup.createTopics(two, topics))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ENGRAM_PARTITIONS=2")
                .hasMessageContaining(topics.compensations().name() + " has 3")
                .hasMessageContaining("set ENGRAM_PARTITIONS=3");
        KafkaSetup.createTopics(ItSupport.config(broker.bootstrapServers(), "parts", prefix, state, 3), topics);
    }

    @Test
    void topicsThatDisagreeAmongThemselvesAreRefused(EmbeddedKafkaBroker broker) throws Exception {
        String prefix = "parts-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Topics topics = new Topics(prefix);
        try (Admin admin =
                Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topics.memoryCommands().name(), 1, (short) 1)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
        EngramConfig two = ItSupport.config(broker.bootstrapServers(), "parts", prefix, state, 2);
        assertThatThrownBy(() -> KafkaSetup.createTopics(two, topics))
                .hasMessageContaining(topics.memoryCommands().name() + " has 1")
                .hasMessageContaining("disagree");
        assertThat(topics.memoryCommands().name()).startsWith(prefix);
    }
}
