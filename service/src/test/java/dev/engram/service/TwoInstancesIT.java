package dev.engram.service;

import static dev.engram.service.ItSupport.awaitVerified;
import static dev.engram.service.ItSupport.get;
import static dev.engram.service.ItSupport.post;
import static dev.engram.service.ItSupport.send;
import static dev.engram.service.ItSupport.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.http.HttpApi;
import dev.engram.topology.Understanders;
import dev.engram.understanding.agent.MemoryView;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two instances with one application id split the partitions; whichever instance is asked, every namespace gets
 * the same answer, served by the instance that owns it.
 */
@ExtendWith(SharedKafkaBroker.class)
class TwoInstancesIT {

    private static final String ROOT = "operator-key";
    private static final String TENANT = "tenant-key";

    private static final int PARTITIONS = 4;

    @TempDir
    Path stateA;

    @TempDir
    Path stateB;

    /** Namespaces chosen to cover every partition, so that both instances own some. */
    private static List<String> namespacesCoveringPartitions() {
        List<String> out = new ArrayList<>();
        Set<Integer> covered = new HashSet<>();
        for (int i = 0; covered.size() < PARTITIONS || out.size() < 6; i++) {
            String ns = "tenant-" + i;
            int p = Utils.toPositive(Utils.murmur2(ns.getBytes(StandardCharsets.UTF_8))) % PARTITIONS;
            if (covered.add(p) || covered.size() == PARTITIONS) {
                out.add(ns);
            }
        }
        return out;
    }

    @Test
    void eitherInstanceAnswersEveryNamespaceWithTheOwnersAnswer(EmbeddedKafkaBroker broker) throws Exception {
        String id = "two-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> namespaces = namespacesCoveringPartitions();
        // an operator's key for everything, and a tenant's key for the first namespace only
        Map<String, String> keys = Map.of(
                "ENGRAM_AUTH",
                "required",
                "ENGRAM_API_KEYS",
                "admin:*:" + ROOT + ";read:" + namespaces.get(0) + ":" + TENANT,
                // the agent construction's reads of another instance's namespaces present this key (the
                // understanding here is the embedded one: the model is never called)
                "ENGRAM_CONSTRUCTION",
                "agent",
                "ENGRAM_LLM_BASE_URL",
                "http://127.0.0.1:9/v1",
                "ENGRAM_LLM_MODEL",
                "unused",
                "ENGRAM_AGENT_API_KEY",
                ROOT);
        EngramConfig configA = ItSupport.config(broker.bootstrapServers(), id, id + ".", stateA, PARTITIONS, keys);
        EngramConfig configB = ItSupport.config(broker.bootstrapServers(), id, id + ".", stateB, PARTITIONS, keys);
        try (EngramService a = EngramService.start(configA, Understanders.embedded());
                EngramService b = EngramService.start(configB, Understanders.embedded());
                KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
            awaitBothOwnPartitions(a, b);
            String baseA = "http://127.0.0.1:" + a.httpPort();
            String baseB = "http://127.0.0.1:" + b.httpPort();
            for (String ns : namespaces) {
                send(
                        producer,
                        a.topics().documents().name(),
                        "d1",
                        upsert(
                                ns,
                                "d1",
                                "Rivers of " + ns,
                                "The river in " + ns + " floods every spring and feeds the rice fields."));
                send(
                        producer,
                        a.topics().documents().name(),
                        "d2",
                        upsert(
                                ns,
                                "d2",
                                "Markets of " + ns,
                                "The market of " + ns + " sells spices, textiles and copper pots."));
                send(
                        producer,
                        a.topics().documents().name(),
                        "d3",
                        upsert(
                                ns,
                                "d3",
                                "Visitors",
                                "Charles Babbage bought copper pots from Ada Lovelace in London."));
            }
            for (String ns : namespaces) {
                awaitVerified(baseA, ns, List.of("d1", "d2", "d3"), ROOT);
            }

            Set<String> servers = new HashSet<>();
            for (String ns : namespaces) {
                String body = "{\"query\": \"Where can I buy spices?\", \"top_k\": 2}";
                JsonNode fromA = post(baseA + "/v1/namespaces/" + ns + "/retrieve", body, ROOT)
                        .body();
                JsonNode fromB = post(baseB + "/v1/namespaces/" + ns + "/retrieve", body, ROOT)
                        .body();

                assertThat(fromA.path("results")).as(ns).isEqualTo(fromB.path("results"));
                assertThat(fromA.path("served_by")).isEqualTo(fromB.path("served_by"));
                assertThat(fromA.path("results").get(0).path("document_id").asText())
                        .isEqualTo("d2");
                servers.add(fromA.path("served_by").asText());
            }
            assertThat(servers)
                    .as("both instances own namespaces, so some answers were forwarded")
                    .containsExactlyInAnyOrder(
                            configA.http().applicationServer(), configB.http().applicationServer());

            // The agent construction reads a namespace's memory where it lives: in its own stores on the owner, over
            // the owner's API (with its key) on the other instance; both read the same.
            for (String ns : namespaces) {
                a.agentMemory().ensureReadable(ns);
                b.agentMemory().ensureReadable(ns);
                List<MemoryView.KnownPassage> related = a.agentMemory().related(ns, "Where can I buy spices?", 2);
                assertThat(related)
                        .as(ns)
                        .isNotEmpty()
                        .isEqualTo(b.agentMemory().related(ns, "Where can I buy spices?", 2));
                assertThat(related.get(0).documentId()).isEqualTo("d2");
                List<MemoryView.KnownEntity> like = a.agentMemory().entitiesLike(ns, "Charles Babbage", 3);
                assertThat(like).as(ns).isNotEmpty().isEqualTo(b.agentMemory().entitiesLike(ns, "Charles Babbage", 3));
                String name = like.get(0).name();
                assertThat(name).isEqualTo("Charles Babbage");
                assertThat(a.agentMemory().entitiesNamed(ns, name, 5))
                        .isNotEmpty()
                        .isEqualTo(b.agentMemory().entitiesNamed(ns, name, 5));
                assertThat(a.agentMemory().relationTypes(ns, 10))
                        .isNotEmpty()
                        .isEqualTo(b.agentMemory().relationTypes(ns, 10));
                assertThat(b.agentMemory().entitiesNamed("nothing-" + ns, "x", 5))
                        .as("a namespace without memory reads as empty")
                        .isEmpty();
            }

            // Either instance lists the whole cluster's namespaces (it asks the other for its own); a tenant's key
            // lists only its namespace, whichever instance it asks.
            for (String base : List.of(baseA, baseB)) {
                JsonNode all = get(base + "/v1/namespaces", ROOT).body();
                assertThat(all.path("instances").asInt()).isEqualTo(2);
                assertThat(all.path("unreachable")).isEmpty();
                assertThat(all.path("incomplete").asBoolean()).isFalse();
                List<String> listed = new ArrayList<>();
                all.path("namespaces").forEach(n -> listed.add(n.asText()));
                assertThat(listed).as(base).containsAll(namespaces).isSorted();
                JsonNode tenants = get(base + "/v1/namespaces", TENANT).body();
                assertThat(tenants.path("namespaces")).hasSize(1);
                assertThat(tenants.path("namespaces").get(0).asText()).isEqualTo(namespaces.get(0));
                assertThat(get(base + "/v1/namespaces?scope=everything", ROOT).status())
                        .isEqualTo(400);
            }

            // A tenant reaches its namespace through either instance (one of them forwards), and no other
            // namespace through either; forwarding grants nothing.
            String own = namespaces.get(0);
            String body = "{\"query\": \"spices\"}";
            for (String base : List.of(baseA, baseB)) {
                assertThat(post(base + "/v1/namespaces/" + own + "/retrieve", body, TENANT)
                                .status())
                        .isEqualTo(200);
                for (String other : namespaces.subList(1, namespaces.size())) {
                    assertThat(post(base + "/v1/namespaces/" + other + "/retrieve", body, TENANT)
                                    .status())
                            .as(other)
                            .isEqualTo(403);
                    ItSupport.Response spoofed = ItSupport.call(
                            HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + other + "/retrieve"))
                                    .header(HttpApi.FORWARDED_HEADER, "127.0.0.1:1")
                                    .POST(HttpRequest.BodyPublishers.ofString(body)));
                    assertThat(spoofed.status())
                            .as("a claimed forward without a key")
                            .isEqualTo(401);
                }
            }
        }
    }

    private static void awaitBothOwnPartitions(EngramService a, EngramService b) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline) {
            if (a.streams().state() == KafkaStreams.State.RUNNING
                    && b.streams().state() == KafkaStreams.State.RUNNING
                    && !a.streams()
                            .metadataForLocalThreads()
                            .iterator()
                            .next()
                            .activeTasks()
                            .isEmpty()
                    && !b.streams()
                            .metadataForLocalThreads()
                            .iterator()
                            .next()
                            .activeTasks()
                            .isEmpty()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the two instances did not split the tasks: "
                + a.streams().state() + " / " + b.streams().state());
    }
}
