package dev.engram.understanding.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Schemas;
import dev.engram.schemas.Span;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.FakeOpenAiServer;
import dev.engram.understanding.llm.LlmConfig;
import dev.engram.understanding.llm.LlmException;
import dev.engram.understanding.llm.OpenAiClient;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The agent construction against recorded tool-calling conversations: no LLM can run on the test machines, so a
 * loopback server speaks the chat-completions protocol and replays recorded replies ({@code src/test/resources/llm/agent}),
 * while the tools run for real against a stage and a small in-memory {@link MemoryView}.
 */
class ConstructionAgentTest {

    private static final String TEXT = "Ada Lovelace wrote the first program for the Analytical Engine of Charles "
            + "Babbage. The Engine was never built.";

    private final FakeOpenAiServer server = new FakeOpenAiServer();
    private final Map<String, Integer> outcomes = new ConcurrentHashMap<>();
    private final Map<String, Integer> tools = new ConcurrentHashMap<>();
    private final AtomicInteger memoryFailures = new AtomicInteger();
    private volatile boolean memoryUnavailable;
    /** Memory answers the readiness check, then goes away before the first search. */
    private volatile boolean searchUnavailable;

    @AfterEach
    void stop() {
        server.close();
    }

    /** Memory holds Charles Babbage, and an older Ada Lovelace. */
    private final MemoryView memory = new MemoryView() {
        @Override
        public List<KnownEntity> entitiesNamed(String namespace, String name, int limit) {
            if (memoryUnavailable) {
                throw new Unavailable("the instance is rebalancing", null);
            }
            if (searchUnavailable) {
                throw new Unavailable("the owner did not answer", null);
            }
            if (memoryFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IllegalStateException("the namespace's owner did not answer");
            }
            return switch (name) {
                case "Charles Babbage" ->
                    List.of(new KnownEntity("ent-babbage", "Charles Babbage", "person", "", List.of("Babbage")));
                case "Ada Lovelace" ->
                    List.of(new KnownEntity("ent-lovelace-old", "Ada Lovelace", "person", "mathematician", List.of()));
                default -> List.of();
            };
        }

        @Override
        public void ensureReadable(String namespace) {
            if (memoryUnavailable) {
                throw new Unavailable("the instance is rebalancing", null);
            }
        }

        @Override
        public List<KnownEntity> entitiesLike(String namespace, String text, int limit) {
            return List.of();
        }

        @Override
        public List<KnownPassage> related(String namespace, String query, int limit) {
            return List.of();
        }

        @Override
        public List<RelationType> relationTypes(String namespace, int limit) {
            return List.of(new RelationType("designed by", 4, "established"));
        }
    };

    /** The deterministic construction: what the agent falls back to. */
    private static final Extractor BASE = new Extractor() {
        @Override
        public String id() {
            return "rules/1";
        }

        @Override
        public boolean cacheable() {
            return false;
        }

        @Override
        public Extraction extract(PassageEvent.Upsert passage) {
            return new Extraction(
                    "memory of " + passage.passageId(),
                    List.of(new Extraction.Entity(
                            "Charles Babbage", EntityType.PERSON, "", List.of(), List.of(new Span(62, 77)))),
                    List.of(),
                    List.of(),
                    List.of("Who wrote the first program?"),
                    id(),
                    null,
                    Extraction.TokenUsage.NONE);
        }
    };

    private ConstructionAgent agent(int rounds, long tokensPerPassage, long tokensPerHour) {
        LlmConfig config = new LlmConfig(server.baseUrl(), "test-model", "", Duration.ofSeconds(5), 0, 4, 1.0, 2.0, "");
        return new ConstructionAgent(
                new OpenAiClient(config, (m, o) -> {}),
                BASE,
                memory,
                new ConstructionAgent.Settings(
                        rounds, 3, tokensPerPassage, tokensPerHour, 2, 2, ns -> !ns.equals("plain")),
                new ConstructionAgent.Listener() {
                    @Override
                    public void passage(String namespace, String outcome, int r) {
                        outcomes.merge(outcome, 1, Integer::sum);
                    }

                    @Override
                    public void toolCall(String tool, String outcome) {
                        tools.merge(tool + ":" + outcome, 1, Integer::sum);
                    }
                },
                Clock.systemUTC());
    }

    private ConstructionAgent agent() {
        return agent(12, 100_000, 1_000_000);
    }

    private static PassageEvent.Upsert passage(String ns, String documentId, int ordinal) {
        return new PassageEvent.Upsert(
                ns,
                documentId,
                1,
                "p" + ordinal,
                ordinal,
                "0123456789abcdef0123456789abcd" + String.format(Locale.ROOT, "%02d", ordinal),
                "Ada Lovelace",
                List.of("Early computing"),
                TEXT,
                0,
                TEXT.length(),
                null,
                null);
    }

    private void replay(String... names) {
        for (String n : names) {
            server.enqueue(FakeOpenAiServer.Reply.ok("agent/" + n + ".json"));
        }
    }

    private static String spanned(Extraction.Entity e) {
        return TEXT.substring(e.spans().get(0).start(), e.spans().get(0).end());
    }

    @Test
    void aCleanPassageBecomesTheAgentsStagedEntitiesAndRelationsAnchoredInTheText() {
        replay("clean-1", "clean-2", "clean-3", "clean-4", "clean-5");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("agent");
        assertThat(x.construction().rounds()).isEqualTo(5);
        assertThat(x.construction().toolCalls()).isEqualTo(10);
        assertThat(x.extractor()).isEqualTo("agent-v1/test-model+rules/1");
        assertThat(x.entities())
                .extracting(Extraction.Entity::name)
                .containsExactly("Ada Lovelace", "Analytical Engine", "Charles Babbage");
        Extraction.Entity engine = x.entities().get(1);
        assertThat(engine.type()).isEqualTo(EntityType.WORK);
        assertThat(engine.aliases()).containsExactly("The Engine");
        assertThat(engine.spans())
                .extracting(s -> TEXT.substring(s.start(), s.end()))
                .containsExactly("Analytical Engine", "The Engine");
        // the mention of an entity memory holds keeps memory's name, so resolution finds it, and its new description
        Extraction.Entity babbage = x.entities().get(2);
        assertThat(babbage.description()).isEqualTo("English mathematician");
        assertThat(spanned(babbage)).isEqualTo("Charles Babbage");
        assertThat(x.facts())
                .extracting(Extraction.Fact::text)
                .containsExactly(
                        "Ada Lovelace wrote the first program for Analytical Engine",
                        "Analytical Engine designed by Charles Babbage");
        Extraction.Fact first = x.facts().get(0);
        assertThat(TEXT.substring(first.evidence().start(), first.evidence().end()))
                .isEqualTo("wrote the first program for the Analytical Engine");
        // memory text, questions and tokens: the deterministic part and the loop's
        assertThat(x.memory()).isEqualTo("memory of p0");
        assertThat(x.questions()).containsExactly("Who wrote the first program?");
        assertThat(x.usage().prompt()).isEqualTo(5 * 900);
        assertThat(x.usage().completion()).isEqualTo(5 * 60);
        assertThat(x.usage().costUsd()).isEqualTo((4500 * 1.0 + 300 * 2.0) / 1_000_000.0);
        assertThat(outcomes).containsEntry("agent", 1);
        assertThat(tools).containsEntry("search_kg:ok", 3).doesNotContainKey("unknown:malformed");
        // the extraction is valid for its topic's schema
        assertThat(Schemas.EXTRACTION.validate(Json.mapper().valueToTree(x))).isEmpty();
    }

    @Test
    void theConversationCarriesTheToolsTheirAnswersAndTheFourStepInstructions() {
        replay("clean-1", "clean-2", "clean-3", "clean-4", "clean-5");
        agent().extract(passage("wiki", "ada", 0));

        List<JsonNode> requests = server.requests();
        assertThat(requests).hasSize(5);
        JsonNode first = requests.get(0);
        assertThat(first.path("tools")).hasSize(17);
        assertThat(first.path("tools").findValuesAsText("name"))
                .contains("read_paragraph", "search_kg", "create_entity", "merge_entities", "get_progress");
        assertThat(first.path("messages").get(0).path("content").asText())
                .contains("READ", "SEARCH", "VERIFY", "CONSTRUCT", "at most 12 rounds");
        // each later request holds the assistant's calls and one tool answer per call, by call id
        JsonNode last = requests.get(4).path("messages");
        List<JsonNode> answers = new ArrayList<>();
        last.forEach(m -> {
            if (m.path("role").asText().equals("tool")) {
                answers.add(m);
            }
        });
        assertThat(answers).hasSize(10);
        assertThat(answers.get(0).path("tool_call_id").asText()).isEqualTo("call_1_0");
        JsonNode read =
                Json.mapper().valueToTree(parse(answers.get(0).path("content").asText()));
        assertThat(read.path("text").asText()).isEqualTo(TEXT);
        JsonNode search = parse(answers.get(3).path("content").asText());
        assertThat(search.path("memory").get(0).path("id").asText()).isEqualTo("ent-babbage");
    }

    @Test
    void aHallucinatedNameIsRefusedAsAnObservationAndNeverReachesTheExtraction() {
        replay("halluc-1", "halluc-2", "halluc-3", "halluc-4");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("agent");
        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Ada Lovelace");
        assertThat(x.facts()).isEmpty();
        List<String> answers = toolAnswers(server.requests().get(3));
        assertThat(answers.get(3)).contains("'Albert Einstein' does not occur in the paragraph");
        assertThat(answers.get(5))
                .as("an alias that occurs does not make up for a name that does not")
                .contains("'Albert Einstein' does not occur in the paragraph");
        assertThat(answers.get(6)).contains("no entity 'Albert Einstein' is staged");
        assertThat(tools).containsEntry("create_entity:error", 2).containsEntry("create_relation:error", 1);
    }

    @Test
    void aToolThatFailsIsAnObservationAndTheAgentGoesOn() {
        memoryFailures.set(1);
        replay("failing-1", "failing-2", "failing-3", "failing-4", "failing-5");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("agent");
        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Ada Lovelace");
        List<String> answers = toolAnswers(server.requests().get(4));
        assertThat(answers.get(1)).contains("the tool failed: the namespace's owner did not answer");
        // a search that failed does not count as searched: creating is refused until one answers
        assertThat(answers.get(2)).contains("search memory for 'Ada Lovelace' first");
    }

    @Test
    void memoryThatCannotBeReadYetMakesThePassageWaitInsteadOfConstructingBlind() {
        memoryUnavailable = true;
        replay("failing-1");

        assertThatThrownBy(() -> agent().extract(passage("wiki", "ada", 0)))
                .isInstanceOfSatisfying(
                        LlmException.class, e -> assertThat(e.retryable()).isTrue())
                .hasMessageContaining("the memory of namespace 'wiki' cannot be read yet");
        assertThat(server.requests())
                .as("no token spent before memory can be read")
                .isEmpty();
    }

    @Test
    void memoryThatGoesAwayMidLoopMakesThePassageWaitToo() {
        replay("failing-1");
        searchUnavailable = true;
        ConstructionAgent agent = agent();

        assertThatThrownBy(() -> agent.extract(passage("wiki", "ada", 0)))
                .hasMessageContaining("the memory of namespace 'wiki' cannot be read yet")
                .satisfies(e -> assertThat(Understander.transientFailure(e)).isTrue());
        assertThat(server.requests())
                .as("the loop stopped at the search that failed")
                .hasSize(1);
    }

    @Test
    void hostileArgumentsAreRefusedByTheToolsContractsWithTheReason() {
        Stage stage = new Stage(passage("wiki", "ada", 0), memory, Stage.Carry.NONE);
        AgentTools.call(stage, new OpenAiClient.ToolCall("c0", "read_paragraph", ""), null);
        AgentTools.call(stage, new OpenAiClient.ToolCall("c1", "search_kg", "{\"query\": \"Ada Lovelace\"}"), null);

        AgentTools.Answer huge = AgentTools.call(
                stage,
                new OpenAiClient.ToolCall(
                        "c2", "create_entity", "{\"name\": \"" + "A".repeat(10_000) + "\", \"type\": \"person\"}"),
                null);
        AgentTools.Answer notAnObject =
                AgentTools.call(stage, new OpenAiClient.ToolCall("c3", "create_entity", "null"), null);
        AgentTools.Answer blank = AgentTools.call(
                stage,
                new OpenAiClient.ToolCall("c4", "create_entity", "{\"name\": \"   \", \"type\": \"person\"}"),
                null);

        assertThat(huge.malformed()).isTrue();
        assertThat(huge.observation().path("error").asText()).contains("break the tool's contract");
        assertThat(notAnObject.malformed()).isTrue();
        assertThat(notAnObject.observation().path("error").asText()).contains("must be a JSON object");
        assertThat(blank.ok()).isFalse();
        assertThat(blank.observation().path("error").asText()).isEqualTo("an entity needs a name");
        assertThat(stage.empty()).isTrue();
    }

    @Test
    void theStepsAreEnforcedReadBeforeWritingSearchBeforeCreating() {
        replay("order-1", "order-2", "order-3");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().reason())
                .as("nothing staged where the deterministic construction finds entities")
                .startsWith("empty: ");
        List<String> answers = toolAnswers(server.requests().get(2));
        assertThat(answers.get(0)).contains("read the paragraph first");
        assertThat(answers.get(2)).contains("search memory for 'Ada Lovelace' first");
    }

    @Test
    void malformedCallsAreAnsweredWithTheReasonAndThreeRoundsOfThemFallBack() {
        replay("malformed-1", "malformed-2", "malformed-3");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("fallback");
        assertThat(x.construction().reason()).startsWith("malformed: 3 rounds in a row");
        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Charles Babbage");
        assertThat(x.extractor()).isEqualTo("rules/1");
        assertThat(x.usage().prompt()).isEqualTo(3 * 900);
        List<String> answers = toolAnswers(server.requests().get(2));
        assertThat(answers.get(0)).contains("the arguments are not JSON");
        assertThat(answers.get(1)).contains("there is no tool named 'drop_database'");
        assertThat(outcomes).containsEntry("malformed", 1);
        assertThat(tools)
                .containsEntry("unknown:malformed", 1)
                .containsEntry("read_paragraph:malformed", 1)
                .containsEntry("create_entity:malformed", 1);
    }

    @Test
    void oneMalformedCallIsRecoveredFrom() {
        replay("recover-1", "recover-2", "recover-3", "recover-4");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("agent");
        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Ada Lovelace");
    }

    @Test
    void aSpentPassageBudgetFallsBackAndSaysSo() {
        replay("costly-1", "costly-2");

        Extraction x = agent(12, 40_000, 1_000_000).extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("fallback");
        assertThat(x.construction().reason()).startsWith("budget: the passage's token budget (40000)");
        assertThat(x.construction().rounds()).isEqualTo(2);
        assertThat(x.usage().prompt()).isEqualTo(60_000);
        assertThat(server.requests()).hasSize(2);
    }

    @Test
    void aSpentNamespaceBudgetFallsBackWithoutCallingTheModel() {
        replay("costly-1", "costly-2");
        ConstructionAgent agent = agent(1, 1_000_000, 50_000);

        Extraction spent = agent.extract(passage("wiki", "ada", 0));
        Extraction next = agent.extract(passage("wiki", "ada", 1));
        server.enqueue(FakeOpenAiServer.Reply.status(400, "error-400.json"));
        Extraction otherNamespace = agent.extract(passage("other", "ada", 1));

        assertThat(spent.construction().reason()).startsWith("rounds:");
        assertThat(next.construction().reason()).startsWith("budget: the namespace's hourly token budget");
        assertThat(next.usage().prompt()).isZero();
        // the budget is the namespace's: another namespace still has its own
        assertThat(otherNamespace.construction().reason()).startsWith("llm_error:");
        assertThat(server.requests()).hasSize(3);
    }

    @Test
    void anLlmThatFailsFallsBackWithNoPartialWrite() {
        // the first round stages an entity, then the model answers 400: nothing the agent staged is written
        replay("recover-2", "recover-3");
        server.enqueue(FakeOpenAiServer.Reply.status(400, "error-400.json"));

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().mode()).isEqualTo("fallback");
        assertThat(x.construction().reason())
                .as("the reason names the status, not the model's address or words")
                .isEqualTo("llm_error: the model answered HTTP 400");
        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Charles Babbage");
    }

    @Test
    void aRateLimitedModelMakesThePassageWaitThenFallsBackAfterItsAttempts() {
        ConstructionAgent agent = agent();
        for (int attempt = 0; attempt < 2; attempt++) {
            server.enqueue(FakeOpenAiServer.Reply.status(429, "error-429.json"));
            assertThatThrownBy(() -> agent.extract(passage("wiki", "ada", 0)))
                    .as("backpressure: the passage is tried again later")
                    .satisfies(e -> assertThat(Understander.transientFailure(e)).isTrue());
        }
        server.enqueue(FakeOpenAiServer.Reply.status(429, "error-429.json"));

        Extraction x = agent.extract(passage("wiki", "ada", 0));

        assertThat(x.construction().reason()).startsWith("llm_unavailable: ").contains("HTTP 429");
        assertThat(outcomes).containsEntry("llm_unavailable", 1);
    }

    @Test
    void roundsAreBounded() {
        IntStream.range(0, 5).forEach(i -> replay("loop-1"));

        Extraction x = agent(4, 100_000, 1_000_000).extract(passage("wiki", "ada", 0));

        assertThat(x.construction().reason()).isEqualTo("rounds: the agent did not finish within 4 rounds");
        assertThat(server.requests())
                .as("four rounds of tool calls, and one answer to finish with")
                .hasSize(5);
        assertThat(x.construction().cacheable()).isTrue();
    }

    @Test
    void mergesAndDeletesOfWhatMemoryHoldsBecomeClaimsForTheMemoryStep() {
        replay("claims-1", "claims-2", "claims-3");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().claims())
                .extracting(Extraction.Claim::kind, Extraction.Claim::subject, Extraction.Claim::other)
                .containsExactly(
                        tuple("same_as", "Charles Babbage", "Ada Lovelace"),
                        tuple("delete_entity", "Ada Lovelace (ent-lovelace-old)", ""),
                        tuple("review", "The Engine", ""));
        assertThat(x.construction().claims().get(0).reason())
                .isEqualTo("same person — \"Analytical Engine of Charles Babbage\"");
    }

    @Test
    void todosAndNamesCarryToTheNextParagraphOfTheDocument() {
        replay("clean-1", "clean-2", "clean-3", "clean-4", "clean-5");
        ConstructionAgent agent = agent();
        agent.extract(passage("wiki", "ada", 0));
        replay("loop-1", "order-3");

        agent.extract(passage("wiki", "ada", 1));

        JsonNode progress = parse(toolAnswers(server.requests().get(6)).get(0));
        assertThat(progress.path("open_todos").get(0).path("id").asText()).isEqualTo("t1");
        assertThat(progress.path("open_todos").get(0).path("text").asText())
                .isEqualTo("find out whether the Engine was built later");
    }

    @Test
    void aModelThatAnswersWithoutReadingTheParagraphFallsBack() {
        replay("order-3");

        Extraction x = agent().extract(passage("wiki", "ada", 0));

        assertThat(x.construction().reason()).isEqualTo("unread: the model answered without reading the paragraph");
        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Charles Babbage");
    }

    @Test
    void extractionsAreKeyedByNamespaceInAgentModeAndPassingFallbacksAreNotCached() {
        ConstructionAgent agent = agent();
        assertThat(agent.id("wiki")).isEqualTo("agent-v1/test-model+rules/1@wiki");
        assertThat(agent.id("plain"))
                .as("not in agent mode: the base extractor's")
                .isEqualTo("rules/1");
        assertThat(Extraction.Construction.fallback("budget: spent", 1, 1).cacheable())
                .isFalse();
        assertThat(Extraction.Construction.fallback("llm_unavailable: away", 1, 1)
                        .cacheable())
                .isFalse();
        assertThat(Extraction.Construction.fallback("malformed: 3 rounds", 3, 3).cacheable())
                .isTrue();
    }

    @Test
    void aNamespaceNotInAgentModeGetsTheDeterministicConstructionWithoutAnyCall() {
        Extraction x = agent().extract(passage("plain", "ada", 0));

        assertThat(x.construction()).isNull();
        assertThat(server.requests()).isEmpty();
    }

    private static List<String> toolAnswers(JsonNode request) {
        List<String> out = new ArrayList<>();
        request.path("messages").forEach(m -> {
            if (m.path("role").asText().equals("tool")) {
                out.add(m.path("content").asText());
            }
        });
        return out;
    }

    private static JsonNode parse(String json) {
        try {
            return Json.mapper().readTree(json);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
