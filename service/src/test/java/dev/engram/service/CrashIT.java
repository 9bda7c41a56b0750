package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.MemoryChange;
import dev.engram.topology.TestDocuments;
import dev.engram.topology.Topics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hard crash: an Engram instance running in a process of its own is killed with SIGKILL in the middle of ingest
 * and started again on the same state directory. Its memory ends exactly as that of an instance that was never
 * killed, and its memory changes carry contiguous versions without a duplicate.
 */
@ExtendWith(SharedKafkaBroker.class)
class CrashIT {

    private static final String NS = "crash";
    private static final int DOCUMENTS = 12;
    private static final String[] CITIES = {"Vienna", "Paris", "Lisbon", "Oslo"};

    @TempDir
    Path dir;

    @Test
    void anInstanceKilledMidIngestEndsAsIfItHadNeverBeenKilled(EmbeddedKafkaBroker broker) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Map<String, JsonNode> reference = runToEnd(broker, "ref-" + run, false);
        Map<String, JsonNode> crashed = runToEnd(broker, "crash-" + run, true);

        assertThat(crashed).isEqualTo(reference);
    }

    /** Ingests the documents through one instance (killed once mid-ingest if {@code kill}); the memory's digest. */
    private Map<String, JsonNode> runToEnd(EmbeddedKafkaBroker broker, String id, boolean kill) throws Exception {
        Path state = dir.resolve(id);
        int port = ItSupport.freePort();
        Map<String, String> env = ItSupport.environment(broker.bootstrapServers(), id, id + ".", state, 2, port);
        List<String> ids = new ArrayList<>();
        ServiceProcess instance = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-1.log"));
        try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
            String topic = instance.topics().documents().name();
            // the first half, then (killed once, if asked) the second half while the instance is down
            for (int i = 0; i < DOCUMENTS / 2; i++) {
                ids.add(send(producer, topic, i));
            }
            if (kill) {
                int before = 2 + new Random(42).nextInt(DOCUMENTS / 2 - 2);
                String stats = instance.base() + "/v1/namespaces/" + NS;
                ItSupport.awaitResponse(
                        Duration.ofSeconds(120),
                        () -> ItSupport.get(stats),
                        r -> r.status() == 200 && verified(r.body()) >= before);
                instance.process().destroyForcibly(); // SIGKILL: no shutdown hook, no commit, no leaving the group
                assertThat(instance.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            for (int i = DOCUMENTS / 2; i < DOCUMENTS; i++) {
                ids.add(send(producer, topic, i));
            }
            if (kill) {
                instance = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-2.log"));
            }
        }
        try {
            ItSupport.awaitVerified(instance.base(), NS, ids);
            assertContiguousVersions(broker, instance.topics());
            return digest(instance.base(), ids);
        } finally {
            instance.process().destroy();
            instance.process().waitFor(60, TimeUnit.SECONDS);
        }
    }

    private static int verified(JsonNode stats) {
        return stats.path("documents_by_status").path("VERIFIED").asInt();
    }

    /** Sends document {@code i}: a report of a station in one of four cities, checked by one person. */
    private static String send(KafkaProducer<String, byte[]> producer, String topic, int i) {
        String doc = "d" + i;
        String city = CITIES[i % CITIES.length];
        ItSupport.send(
                producer,
                topic,
                doc,
                TestDocuments.upsert(
                        NS,
                        doc,
                        "Report " + i,
                        "Station " + i + " in " + city + " measured " + (i * 7) + " millimetres of rain.\n\n"
                                + "Maria Keller of the " + city + " Weather Office checked station " + i + " in May "
                                + (1990 + i) + "."));
        return doc;
    }

    /** Every memory change of the namespace in order: versions 1, 2, 3, … without a gap or a repeat. */
    private static void assertContiguousVersions(EmbeddedKafkaBroker broker, Topics topics) {
        List<MemoryChange> changes = ItSupport.readCommitted(
                        broker.bootstrapServers(),
                        topics.memoryChanges().name(),
                        new StringDeserializer(),
                        topics.memoryChanges().valueSerde().deserializer(),
                        1,
                        Duration.ofSeconds(20))
                .stream()
                .filter(r -> NS.equals(r.key()))
                .map(r -> r.value())
                .toList();
        long previous = 0;
        for (MemoryChange c : changes) {
            assertThat(c.version())
                    .as("versions increase without gaps or repeats")
                    .isEqualTo(previous + 1);
            previous = c.version();
        }
        assertThat(previous).isPositive();
    }

    /** What the instance remembers, without times, positions and the instance's address. */
    private static Map<String, JsonNode> digest(String base, List<String> ids) {
        Map<String, JsonNode> out = new TreeMap<>();
        ObjectNode stats =
                (ObjectNode) ItSupport.get(base + "/v1/namespaces/" + NS).body();
        stats.remove(List.of("watermark", "served_by"));
        out.put("namespace", stats);
        for (String doc : ids) {
            ObjectNode d = (ObjectNode) ItSupport.get(base + "/v1/namespaces/" + NS + "/documents/" + doc)
                    .body();
            d.remove(List.of("watermark", "served_by", "updated_at"));
            out.put(doc, d);
        }
        for (String city : CITIES) {
            ObjectNode e = (ObjectNode) ItSupport.get(base + "/v1/namespaces/" + NS + "/entities?name=" + city)
                    .body();
            e.remove("served_by");
            for (JsonNode entity : e.path("entities")) {
                for (JsonNode p : entity.path("passages")) {
                    ((ObjectNode) p).remove(List.of("at", "operation"));
                }
                for (JsonNode decision : entity.path("decisions")) {
                    ((ObjectNode) decision).remove("at");
                }
            }
            out.put("entity " + city, e);
        }
        return out;
    }
}
