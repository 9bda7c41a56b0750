package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code engram demo} as a user runs it — the packaged service with its embedded broker in one process, storage in one
 * directory — started again in the same directory: after a SIGKILL in the middle of the demo's ingest (broker and
 * service die together, nothing is closed), after a clean stop, and after a SIGKILL once idle. Each time the broker
 * comes back with its cluster and records, the service resumes, and the memory is the same.
 */
class DemoRestartIT {

    private static final int DEMO_DOCUMENTS = 6;

    @TempDir
    Path home;

    @Test
    void theDemoResumesInItsDirectoryAfterAKillAndAfterAStop() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("ENGRAM_STATE_DIR", home.resolve("state").toString());
        env.put("ENGRAM_EMBEDDED_KAFKA_PORT", Integer.toString(ItSupport.freePort()));
        env.put("ENGRAM_HTTP_PORT", Integer.toString(ItSupport.freePort()));
        env.put("ENGRAM_ROCKSDB_MEMORY_MB", "32");

        // 1. killed as soon as the demo has produced its documents, while they are being ingested
        Path log1 = ServiceProcess.LOGS.resolve("demo-restart-1.log");
        ServiceProcess first = ServiceProcess.start(env, log1, "demo", "/v1/health/ready");
        awaitLine(log1, "sample documents to topic");
        kill(first);

        // 2. started again: the broker keeps its cluster id, the demo's documents all end up in memory
        ServiceProcess second = ServiceProcess.start(
                env, ServiceProcess.LOGS.resolve("demo-restart-2.log"), "demo", "/v1/health/ready");
        Map<String, JsonNode> memory = memoryOnceIngested(second.base());
        assertThat(memory.get("namespace").path("documents").asInt()).isEqualTo(DEMO_DOCUMENTS);
        second.process().destroy(); // SIGTERM: the shutdown hook closes the service, then the broker
        assertThat(second.process().waitFor(60, TimeUnit.SECONDS)).isTrue();

        // 3. after a clean stop: the same memory (the demo's documents come again, unchanged)
        ServiceProcess third = ServiceProcess.start(
                env, ServiceProcess.LOGS.resolve("demo-restart-3.log"), "demo", "/v1/health/ready");
        assertThat(memoryOnceIngested(third.base())).isEqualTo(memory);
        // the demo sent its documents again: idle once the read step has committed past them (a kill inside that
        // transaction is another case than this test's)
        awaitCommittedThroughEnd(env.get("ENGRAM_EMBEDDED_KAFKA_PORT"), "engram-ingest", "engram.documents");
        kill(third);

        // 4. after a SIGKILL once idle: the same memory again
        ServiceProcess fourth = ServiceProcess.start(
                env, ServiceProcess.LOGS.resolve("demo-restart-4.log"), "demo", "/v1/health/ready");
        try {
            assertThat(memoryOnceIngested(fourth.base())).isEqualTo(memory);
            // the console says what a user must act on: the broker's log, retried producer errors among it, is a file
            Path brokerLog = home.resolve("kafka.log");
            assertThat(brokerLog).exists();
            assertThat(Files.readString(brokerLog)).contains("KafkaRaftServer");
            for (int i = 1; i <= 4; i++) {
                assertThat(Files.readAllLines(ServiceProcess.LOGS.resolve("demo-restart-" + i + ".log")))
                        .as("the console of run %d", i)
                        .noneMatch(line -> line.contains(" ReplicaManager - ")
                                || line.contains("CONCURRENT_TRANSACTIONS")
                                || line.contains("OutOfOrderSequence")
                                || line.contains(" WARN Sender - ")
                                || line.contains("DefaultAutoTopicCreationManager"))
                        .anyMatch(line -> line.contains("its log in " + brokerLog));
            }
        } finally {
            fourth.process().destroy();
            fourth.process().waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** Waits until {@code group} has committed, stably, every partition of {@code topic} to its end. */
    private static void awaitCommittedThroughEnd(String port, String group, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(
                                group, new ListConsumerGroupOffsetsOptions().requireStable(true))
                        .partitionsToOffsetAndMetadata()
                        .get();
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                admin.describeTopics(List.of(topic))
                        .allTopicNames()
                        .get()
                        .get(topic)
                        .partitions()
                        .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
                boolean idle = true;
                for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e :
                        admin.listOffsets(latest).all().get().entrySet()) {
                    OffsetAndMetadata c = committed.get(e.getKey());
                    long end = e.getValue().offset();
                    idle &= end == 0 || (c != null && c.offset() >= end);
                }
                if (idle) {
                    return;
                }
                assertThat(System.nanoTime())
                        .as("%s committed through the end of %s", group, topic)
                        .isLessThan(deadline);
                Thread.sleep(100);
            }
        }
    }

    private static void kill(ServiceProcess instance) throws InterruptedException {
        instance.process().destroyForcibly(); // SIGKILL: no shutdown hook, the broker's logs are not closed
        assertThat(instance.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    private static void awaitLine(Path log, String text) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.readString(log, StandardCharsets.UTF_8).contains(text)) {
            assertThat(System.nanoTime()).as("'%s' in %s", text, log).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** Waits until the demo's documents are all VERIFIED; what memory holds, without times and addresses. */
    private static Map<String, JsonNode> memoryOnceIngested(String base) throws InterruptedException {
        ItSupport.awaitResponse(
                Duration.ofSeconds(120),
                () -> ItSupport.get(base + "/v1/namespaces/demo"),
                r -> r.status() == 200
                        && r.body().path("documents_by_status").path("VERIFIED").asInt() == DEMO_DOCUMENTS);
        Map<String, JsonNode> out = new HashMap<>();
        ObjectNode stats =
                (ObjectNode) ItSupport.get(base + "/v1/namespaces/demo").body();
        out.put("version", stats.path("watermark").path("version"));
        stats.remove(List.of("watermark", "served_by"));
        out.put("namespace", stats);
        ObjectNode answer = (ObjectNode) ItSupport.post(
                        base + "/v1/namespaces/demo/retrieve",
                        "{\"query\": \"Who designed the Analytical Engine?\", \"top_k\": 3}")
                .body();
        List<String> passages = new ArrayList<>();
        answer.path("results").forEach(r -> passages.add(r.path("passage_id").asText()));
        out.put("retrieved", Json.mapper().valueToTree(passages));
        return out;
    }
}
