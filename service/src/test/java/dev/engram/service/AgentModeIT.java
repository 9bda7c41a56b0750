package dev.engram.service;

import static dev.engram.service.ItSupport.awaitVerified;
import static dev.engram.service.ItSupport.get;
import static dev.engram.service.ItSupport.send;
import static dev.engram.service.ItSupport.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.Topics;
import dev.engram.understanding.llm.FakeOpenAiServer;
import dev.engram.understanding.llm.FakeOpenAiServer.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent construction ({@code ENGRAM_CONSTRUCTION=agent}) through the real broker and the service's own memory: the
 * agent reads what earlier documents put in memory, its writes enter memory through the memory step's verification and
 * resolution, a merge the rules refuse becomes a review item, a failing model falls back to the deterministic
 * construction, and an instance killed mid-loop leaves no partial write. No LLM runs on the test machines: the model
 * is a loopback server speaking the OpenAI protocol with recorded tool-calling replies
 * ({@code src/test/resources/llm/agent-it}).
 */
@ExtendWith(SharedKafkaBroker.class)
class AgentModeIT {

    private static final String NS = "agentic";

    @TempDir
    Path state;

    private static Reply recorded(String name) {
        return Reply.ok("agent-it/" + name + ".json");
    }

    @Test
    void theAgentBuildsMemoryFromWhatMemoryHoldsAndTheRulesStillDecideMerges(EmbeddedKafkaBroker broker)
            throws Exception {
        try (FakeOpenAiServer llm = new FakeOpenAiServer()) {
            llm.enqueueFor(
                    "engine-doc",
                    recorded("engine-1"),
                    recorded("engine-2"),
                    recorded("engine-3"),
                    recorded("engine-4"));
            llm.enqueueFor(
                    "program-doc",
                    recorded("program-1"),
                    recorded("program-2"),
                    recorded("program-3"),
                    recorded("program-4"));
            llm.enqueueFor("hopper-doc", Reply.status(400, "error-400.json"));
            String id = "agent-" + UUID.randomUUID().toString().substring(0, 8);
            EngramConfig config =
                    ItSupport.config(broker.bootstrapServers(), id, id + ".", state, 2, agentMode(llm, Map.of()));
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers());
                    EngramService service = EngramService.start(config)) {
                assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
                String base = "http://127.0.0.1:" + service.httpPort();
                String documents = service.topics().documents().name();
                send(
                        producer,
                        documents,
                        "engine-doc",
                        upsert(
                                NS,
                                "engine-doc",
                                "Engine",
                                "Charles Babbage designed the Analytical Engine. The Engine" + " was never built."));
                awaitVerified(base, NS, List.of("engine-doc"));
                send(
                        producer,
                        documents,
                        "program-doc",
                        upsert(
                                NS,
                                "program-doc",
                                "Program",
                                "Ada Lovelace wrote the first program for the Analytical" + " Engine."));
                send(
                        producer,
                        documents,
                        "hopper-doc",
                        upsert(NS, "hopper-doc", "Hopper", "Grace Hopper wrote the first compiler."));
                awaitVerified(base, NS, List.of("program-doc", "hopper-doc"));

                // the second document's agent found the engine in memory and attached its mention to it
                JsonNode engine = only(get(base + "/v1/namespaces/" + NS + "/entities?name=Analytical%20Engine")
                        .body());
                assertThat(engine.path("type").asText()).isEqualToIgnoringCase("work");
                assertThat(engine.path("passage_count").asInt()).isEqualTo(2);
                assertThat(engine.path("aliases").toString().toLowerCase(Locale.ROOT))
                        .contains("the engine");
                // the agent's relations are memory's facts, and its relation types the namespace's schema
                JsonNode relations = get(base + "/v1/namespaces/" + NS + "/relations?established_after=1")
                        .body();
                assertThat(relations.path("relations").findValuesAsText("relation"))
                        .containsExactlyInAnyOrder("designed by", "wrote the first program for");
                assertThat(relations.path("relations").findValuesAsText("status"))
                        .containsOnly("established");
                assertThat(get(base + "/v1/namespaces/" + NS + "/relations")
                                .body()
                                .path("relations")
                                .findValuesAsText("status"))
                        .as("seen once, a relation type is only proposed")
                        .containsOnly("proposed");
                // a merge of a person and a work: the rules refused it, so a person reviews it
                JsonNode ada = only(get(base + "/v1/namespaces/" + NS + "/entities?name=Ada%20Lovelace")
                        .body());
                assertThat(ada.path("id").asText())
                        .isNotEqualTo(engine.path("id").asText());
                JsonNode reviews =
                        get(base + "/v1/namespaces/" + NS + "/reviews").body();
                List<String> kinds = reviews.path("reviews").findValuesAsText("kind");
                assertThat(kinds).contains("agent_same_as", "agent_review");
                assertThat(reviews.toString()).contains("Ada Lovelace = Analytical Engine", "a merge the rules refuse");
                // each passage says how it was constructed
                JsonNode program = get(base + "/v1/namespaces/" + NS + "/documents/program-doc")
                        .body()
                        .path("passages")
                        .get(0);
                assertThat(program.path("construction").path("mode").asText()).isEqualTo("agent");
                assertThat(program.path("construction").path("rounds").asInt()).isEqualTo(4);
                assertThat(program.path("construction").path("claims").findValuesAsText("kind"))
                        .containsExactly("same_as", "review");
                JsonNode hopper = get(base + "/v1/namespaces/" + NS + "/documents/hopper-doc")
                        .body()
                        .path("passages")
                        .get(0);
                assertThat(hopper.path("construction").path("mode").asText()).isEqualTo("fallback");
                assertThat(hopper.path("construction").path("reason").asText())
                        .isEqualTo("llm_error: the model answered HTTP 400");
                // the model failed for the third document: the deterministic construction took it, and said so
                assertThat(get(base + "/v1/namespaces/" + NS + "/entities?name=Grace%20Hopper")
                                .body()
                                .path("entities"))
                        .hasSize(1);
                String metrics = get(base + "/metrics").raw().body();
                assertThat(metrics)
                        .containsPattern("engram_agent_passages_total\\{namespace=\"agentic\",outcome=\"agent\"} 2.0")
                        .containsPattern(
                                "engram_agent_passages_total\\{namespace=\"agentic\",outcome=\"llm_error\"} 1.0")
                        .containsPattern("engram_agent_tool_calls_total\\{outcome=\"ok\",tool=\"search_kg\"} 4.0")
                        .containsPattern("engram_agent_rounds_count\\{namespace=\"agentic\"} 3\\b")
                        .containsPattern("engram_llm_tokens_total\\{kind=\"prompt\",model=\"test-model\","
                                + "namespace=\"agentic\"} 6400.0");
                // a document the agent constructed is retracted exactly: its entity, facts and review items leave,
                // and what another document supports stays
                send(producer, documents, "program-doc", ItSupport.delete(NS, "program-doc"));
                ItSupport.awaitResponse(
                        Duration.ofSeconds(60),
                        () -> get(base + "/v1/namespaces/" + NS + "/documents/program-doc"),
                        r -> r.body().path("status").asText().equals("ARCHIVED"));
                assertThat(get(base + "/v1/namespaces/" + NS + "/entities?name=Ada%20Lovelace")
                                .body()
                                .path("entities"))
                        .isEmpty();
                assertThat(only(get(base + "/v1/namespaces/" + NS + "/entities?name=Analytical%20Engine")
                                        .body())
                                .path("passage_count")
                                .asInt())
                        .isEqualTo(1);
                // (relation types are counted on the query snapshot, which follows memory within a second)
                ItSupport.awaitResponse(
                        Duration.ofSeconds(30), () -> get(base + "/v1/namespaces/" + NS + "/relations"), r -> r.body()
                                .path("relations")
                                .findValuesAsText("relation")
                                .equals(List.of("designed by")));
                assertThat(get(base + "/v1/namespaces/" + NS + "/reviews")
                                .body()
                                .path("reviews")
                                .findValuesAsText("kind"))
                        .noneMatch(k -> k.startsWith("agent_"));
                // the agent read memory through the tools: its second document's search found the engine
                assertThat(llm.requests().stream()
                                .map(JsonNode::toString)
                                .filter(r -> r.contains("program-doc") && r.contains("mechanical computer")))
                        .isNotEmpty();
            }
        }
    }

    @Test
    void anInstanceKilledMidLoopLeavesNoPartialWriteAndTheLoopRunsAgain(EmbeddedKafkaBroker broker) throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        try (FakeOpenAiServer llm = new FakeOpenAiServer()) {
            // the first run stages UNIVAC, then its next call is never answered: the instance dies meanwhile
            llm.enqueueFor(
                    "crash-doc",
                    recorded("crash-1"),
                    recorded("crash-2"),
                    Reply.okAfter("agent-it/crash-4.json", never),
                    recorded("crash-1"),
                    recorded("crash-3"),
                    recorded("crash-4"));
            String id = "agent-kill-" + UUID.randomUUID().toString().substring(0, 8);
            Map<String, String> env =
                    ItSupport.environment(broker.bootstrapServers(), id, id + ".", state, 2, ItSupport.freePort());
            env.putAll(agentMode(llm, Map.of("ENGRAM_INSTANCE_ID", "agent-kill")));
            ServiceProcess first = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-1.log"));
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
                send(
                        producer,
                        first.topics().documents().name(),
                        "crash-doc",
                        upsert(NS, "crash-doc", "Hopper", "Grace Hopper wrote the first compiler for the UNIVAC."));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (llm.requestsFor("crash-doc") < 3) {
                    assertThat(System.nanoTime()).as("the loop's third call").isLessThan(deadline);
                    Thread.sleep(50);
                }
                first.process().destroyForcibly(); // SIGKILL mid-loop, with UNIVAC staged
                assertThat(first.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            Path secondLog = ServiceProcess.LOGS.resolve(id + "-2.log");
            ServiceProcess second = ServiceProcess.start(env, secondLog);
            try {
                awaitVerified(second.base(), NS, List.of("crash-doc"));
                assertThat(get(second.base() + "/v1/namespaces/" + NS + "/entities?name=UNIVAC")
                                .body()
                                .path("entities"))
                        .as("what the killed loop staged never reached memory")
                        .isEmpty();
                assertThat(get(second.base() + "/v1/namespaces/" + NS + "/entities?name=Grace%20Hopper")
                                .body()
                                .path("entities"))
                        .as(() ->
                                "the entity of the loop run again; the model was asked " + llm.requestsFor("crash-doc")
                                        + " times; the document: "
                                        + get(second.base() + "/v1/namespaces/" + NS + "/documents/crash-doc")
                                                .body()
                                        + "; the end of the second instance's log:\n" + ServiceProcess.tail(secondLog))
                        .hasSize(1);
                assertThat(llm.requestsFor("crash-doc")).isEqualTo(6);
            } finally {
                second.process().destroy();
                second.process().waitFor(60, TimeUnit.SECONDS);
                never.countDown();
            }
            assertThat(ItSupport.deadLetters(broker.bootstrapServers(), new Topics(id + "."), 0))
                    .isEmpty();
        }
    }

    private static Map<String, String> agentMode(FakeOpenAiServer llm, Map<String, String> more) {
        Map<String, String> env = new HashMap<>(Map.of(
                "ENGRAM_CONSTRUCTION", "agent",
                "ENGRAM_LLM_BASE_URL", llm.baseUrl().toString(),
                "ENGRAM_LLM_MODEL", "test-model",
                "ENGRAM_LLM_MAX_RETRIES", "0",
                "ENGRAM_UNDERSTAND_BACKOFF_MS", "100",
                "ENGRAM_UNDERSTAND_MAX_BACKOFF_MS", "400"));
        env.putAll(more);
        return env;
    }

    private static JsonNode only(JsonNode entities) {
        List<JsonNode> found = new ArrayList<>();
        entities.path("entities").forEach(found::add);
        assertThat(found).hasSize(1);
        return found.get(0);
    }
}
