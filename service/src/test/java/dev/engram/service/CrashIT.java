package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.MemoryChange;
import dev.engram.service.app.EmbeddedKafkaBroker;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hard crashes: an Engram instance running in a process of its own is killed with SIGKILL several times in the middle
 * of ingest — at random moments after a batch of documents was sent, so inside a transaction, between the memory
 * step's writes, during restoration, or idle — and started again on the same state directory each time. Its memory
 * ends exactly as that of an instance that was never killed, and its memory changes carry contiguous versions without
 * a duplicate, and its counters of documents read count each document once. The moments come from a seed printed with any failure (set {@code -Dengram.crash.seed} to replay one).
 */
@ExtendWith(SharedKafkaBroker.class)
class CrashIT {

    private static final String NS = "crash";
    private static final int DOCUMENTS = 16;
    private static final int KILLS = 3;
    private static final String[] CITIES = {"Vienna", "Paris", "Lisbon", "Oslo"};

    @TempDir
    Path dir;

    @Test
    void anInstanceKilledMidIngestEndsAsIfItHadNeverBeenKilled(EmbeddedKafkaBroker broker) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        long seed = Long.getLong("engram.crash.seed", System.nanoTime());
        Map<String, JsonNode> reference = runToEnd(broker, "ref-" + run, null);
        Map<String, JsonNode> crashed = runToEnd(broker, "crash-" + run, new Random(seed));

        assertThat(crashed).as("memory after %d kills (seed %d)", KILLS, seed).isEqualTo(reference);
    }

    /**
     * Ingests the documents through one instance, in {@code KILLS + 1} batches; with {@code kills}, the instance is
     * killed at a random moment after each batch but the last, and the next batch is sent while it is down, before it
     * starts again. Returns the memory's digest.
     */
    private Map<String, JsonNode> runToEnd(EmbeddedKafkaBroker broker, String id, Random kills) throws Exception {
        Path state = dir.resolve(id);
        int port = ItSupport.freePort();
        Map<String, String> env = ItSupport.environment(broker.bootstrapServers(), id, id + ".", state, 2, port);
        // a killed instance never leaves its group: its restarted self waits for the session to expire
        env.put("ENGRAM_KAFKA_SESSION_TIMEOUT_MS", "6000");
        List<String> ids = new ArrayList<>();
        ServiceProcess instance = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-0.log"));
        try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
            String topic = instance.topics().documents().name();
            int batch = DOCUMENTS / (KILLS + 1);
            for (int round = 0; round <= KILLS; round++) {
                for (int i = round * batch; i < (round + 1) * batch; i++) {
                    ids.add(send(producer, topic, i));
                }
                if (instance == null) {
                    instance = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-" + round + ".log"));
                }
                if (kills != null && round < KILLS) {
                    Thread.sleep(kills.nextInt(2500));
                    instance.process().destroyForcibly(); // SIGKILL: no shutdown hook, no commit, no leaving the group
                    assertThat(instance.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
                    instance = null;
                }
            }
        }
        try {
            ItSupport.awaitVerified(instance.base(), NS, ids);
            assertContiguousVersions(broker, instance.topics());
            // every document counted once, whatever the kills aborted and replayed, and across the restarts
            String metrics = ItSupport.get(instance.base() + "/metrics").raw().body();
            assertThat(documents(metrics, "upserted"))
                    .as("documents read, as committed")
                    .isEqualTo(ids.size());
            assertThat(documents(metrics, "dead_lettered")).isZero();
            assertThat(documents(metrics, "unchanged")).isZero();
            return digest(instance.base(), ids);
        } finally {
            instance.process().destroy();
            instance.process().waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** The documents read with {@code outcome}, summed over the tasks' series. */
    private static double documents(String metrics, String outcome) {
        double sum = 0;
        Matcher m = Pattern.compile("(?m)^engram_documents_total\\{outcome=\"" + outcome + "\"[^}]*} ([0-9.]+)$")
                .matcher(metrics);
        while (m.find()) {
            sum += Double.parseDouble(m.group(1));
        }
        return sum;
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
