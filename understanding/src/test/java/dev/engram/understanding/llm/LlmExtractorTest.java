package dev.engram.understanding.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Schemas;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.llm.FakeOpenAiServer.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The LLM extractor against a loopback server speaking the OpenAI protocol with recorded responses. */
class LlmExtractorTest {

    private static final String TEXT = "Ada Lovelace was an English mathematician. She wrote Note G, which describes "
            + "an algorithm for the Analytical Engine designed by Babbage. Charles Babbage was pleased.";
    private static final PassageEvent.Upsert PASSAGE = new PassageEvent.Upsert(
            "wiki",
            "ada",
            1,
            "0123456789abcdef0123456789abcdef",
            0,
            "h",
            "Ada Lovelace",
            List.of(),
            TEXT,
            0,
            TEXT.length(),
            null,
            null);

    private final FakeOpenAiServer server = new FakeOpenAiServer();
    private final Map<String, Integer> calls = new ConcurrentHashMap<>();

    @AfterEach
    void stop() {
        server.close();
    }

    private LlmExtractor extractor(Duration timeout, int retries, int concurrency) {
        LlmConfig config =
                new LlmConfig(server.baseUrl(), "test-model", "sk-test", timeout, retries, concurrency, 2.0, 8.0, "");
        return new LlmExtractor(new OpenAiClient(config, (model, outcome) -> calls.merge(outcome, 1, Integer::sum)), 3);
    }

    private LlmExtractor extractor() {
        return extractor(Duration.ofSeconds(5), 3, 4);
    }

    @Test
    void turnsAStructuredReplyIntoAnAnchoredExtraction() {
        server.enqueue(Reply.ok("extraction-ok.json"));

        Extraction x = extractor().extract(PASSAGE);

        assertThat(x.memory()).startsWith("Ada Lovelace was an English mathematician. Ada Lovelace wrote Note G");
        assertThat(x.entities())
                .extracting(Extraction.Entity::name, Extraction.Entity::type)
                .containsExactly(
                        tuple("Ada Lovelace", EntityType.PERSON),
                        tuple("Note G", EntityType.WORK),
                        tuple("Analytical Engine", EntityType.WORK),
                        tuple("Charles Babbage", EntityType.PERSON));
        Extraction.Entity babbage = x.entities().get(3);
        assertThat(babbage.spans()).hasSize(2); // "Babbage" (alias) and "Charles Babbage"
        babbage.spans()
                .forEach(s -> assertThat(TEXT.substring(s.start(), s.end())).endsWith("Babbage"));
        assertThat(x.facts()).hasSize(3);
        Extraction.Fact wrote = x.facts().get(0);
        assertThat(TEXT.substring(wrote.evidence().start(), wrote.evidence().end()))
                .isEqualTo("She wrote Note G");
        assertThat(x.facts().get(2).evidence())
                .as("a quote the passage does not contain has no span")
                .isNull();
        assertThat(x.facts().get(2).confidence()).isEqualTo(1.0);
        assertThat(x.relations()).singleElement().satisfies(r -> assertThat(r.entities())
                .hasSize(3));
        assertThat(x.questions()).hasSize(3).first().isEqualTo("Who wrote Note G?");
        assertThat(x.extractor()).isEqualTo("llm/extract-v1/test-model");
        assertThat(x.model()).isEqualTo("test-model");
        assertThat(x.usage().prompt()).isEqualTo(412);
        assertThat(x.usage().completion()).isEqualTo(236);
        assertThat(x.usage().costUsd()).isEqualTo((412 * 2.0 + 236 * 8.0) / 1e6);
        assertThat(Schemas.EXTRACTION.validate(Json.mapper().valueToTree(x))).isEmpty();
    }

    @Test
    void sendsTheModelThePromptThePassageAndTheReplySchema() {
        server.enqueue(Reply.ok("extraction-ok.json"));

        extractor().extract(PASSAGE);

        JsonNode request = server.requests().get(0);
        assertThat(request.path("model").asText()).isEqualTo("test-model");
        assertThat(request.path("response_format").path("type").asText()).isEqualTo("json_schema");
        assertThat(request.path("response_format")
                        .path("json_schema")
                        .path("schema")
                        .path("required"))
                .extracting(JsonNode::asText)
                .contains("memory", "entities", "facts", "relations", "questions");
        assertThat(request.path("messages").get(0).path("content").asText())
                .contains("exactly 3 different questions")
                .doesNotContain("{questions}");
        assertThat(request.path("messages").get(1).path("content").asText())
                .contains("Title: Ada Lovelace")
                .contains(TEXT);
        assertThat(server.headers().get(0).get("Authorization")).containsExactly("Bearer sk-test");
    }

    @Test
    void repairsCodeFencesAndTrailingCommasWithoutAskingAgain() {
        server.enqueue(Reply.ok("extraction-fenced.json"));

        Extraction x = extractor().extract(PASSAGE);

        assertThat(x.entities()).hasSize(4);
        assertThat(server.requests()).hasSize(1);
    }

    @Test
    void asksOnceMoreWithTheErrorWhenTheReplyIsNotValidJson() {
        server.enqueue(Reply.ok("extraction-truncated.json"), Reply.ok("extraction-ok.json"));

        Extraction x = extractor().extract(PASSAGE);

        assertThat(x.entities()).hasSize(4);
        assertThat(server.requests()).hasSize(2);
        JsonNode retry = server.requests().get(1).path("messages");
        assertThat(retry).hasSize(4);
        assertThat(retry.get(3).path("content").asText()).contains("not valid JSON");
        assertThat(x.usage().prompt()).as("tokens of both attempts count").isEqualTo(412 * 2);
    }

    @Test
    void givesUpWithTheReasonAfterTwoMalformedReplies() {
        server.enqueue(Reply.ok("extraction-truncated.json"), Reply.ok("extraction-wrong-shape.json"));

        assertThatThrownBy(() -> extractor().extract(PASSAGE))
                .isInstanceOf(ExtractionException.class)
                .hasMessageContaining("malformed output twice")
                .hasMessageContaining("schema");
        assertThat(server.requests()).hasSize(2);
    }

    @Test
    void retriesRateLimitsHonouringRetryAfter() {
        server.enqueue(new Reply(429, "error-429.json", Map.of("Retry-After", "1"), 0), Reply.ok("extraction-ok.json"));

        long t0 = System.nanoTime();
        Extraction x = extractor().extract(PASSAGE);

        assertThat(x.entities()).hasSize(4);
        assertThat(server.requests()).hasSize(2);
        assertThat(calls).containsEntry("retried", 1).containsEntry("ok", 1);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
    }

    @Test
    void retriesServerErrorsAndTimeouts() {
        server.enqueue(
                Reply.status(500, "error-500.json"),
                new Reply(200, "extraction-ok.json", Map.of(), 2_000),
                Reply.status(503, "error-500.json"),
                Reply.ok("extraction-ok.json"));

        Extraction x = extractor(Duration.ofMillis(500), 4, 4).extract(PASSAGE);

        assertThat(x.entities()).hasSize(4);
        assertThat(server.requests()).hasSize(4);
        assertThat(calls).containsEntry("retried", 3).containsEntry("ok", 1);
    }

    @Test
    void doesNotRetryABadRequest() {
        server.enqueue(Reply.status(400, "error-400.json"), Reply.ok("extraction-ok.json"));

        assertThatThrownBy(() -> extractor().extract(PASSAGE))
                .isInstanceOf(ExtractionException.class)
                .hasMessageContaining("HTTP 400")
                .hasMessageContaining("Invalid 'messages'");
        assertThat(server.requests()).hasSize(1);
        assertThat(calls).containsEntry("failed", 1);
    }

    @Test
    void givesUpWhenRetriesRunOut() {
        server.enqueue(Reply.status(503, "error-500.json"), Reply.status(503, "error-500.json"));

        assertThatThrownBy(() -> extractor(Duration.ofSeconds(5), 1, 4).extract(PASSAGE))
                .isInstanceOf(ExtractionException.class)
                .hasMessageContaining("gave up after 2 attempts")
                .hasMessageContaining("HTTP 503");
    }

    @Test
    void boundsTheRequestsInFlight() throws Exception {
        for (int i = 0; i < 6; i++) {
            server.enqueue(new Reply(200, "extraction-ok.json", Map.of(), 150));
        }
        LlmExtractor extractor = extractor(Duration.ofSeconds(5), 0, 2);
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<Extraction>> futures = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                futures.add(pool.submit(() -> extractor.extract(PASSAGE)));
            }
            for (Future<Extraction> f : futures) {
                assertThat(f.get().entities()).hasSize(4);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(server.maxInFlight()).isEqualTo(2);
    }

    @Test
    void embedsThroughTheEmbeddingsEndpointInInputOrder() {
        server.enqueue(Reply.ok("embeddings-ok.json"), Reply.ok("embeddings-one.json"));
        LlmConfig config = new LlmConfig(server.baseUrl(), "m", "", Duration.ofSeconds(5), 0, 1, 0, 0, "emb");
        OpenAiClient client = new OpenAiClient(config, (m, o) -> {});

        List<float[]> vectors = client.embeddings("emb", List.of("first", "second"));
        OpenAiEmbedder embedder = new OpenAiEmbedder(client, "emb");

        assertThat(vectors.get(0)).containsExactly(2f, 0f, 0f);
        assertThat(vectors.get(1)).containsExactly(0f, 3f, 4f);
        assertThat(OpenAiEmbedder.normalize(vectors.get(1))).containsExactly(0f, 0.6f, 0.8f);
        assertThat(embedder.dimensions()).isEqualTo(3);
        assertThat(server.requests().get(0).path("input")).hasSize(2);
    }

    @Test
    void decomposesComparisonQuestions() {
        server.enqueue(Reply.ok("decompose-ok.json"));
        LlmConfig config = new LlmConfig(server.baseUrl(), "m", "", Duration.ofSeconds(5), 0, 1, 0, 0, "");

        List<String> parts = new QueryDecomposer(new OpenAiClient(config, (m, o) -> {}))
                .decompose("Which film has the director born later, Agni or Arrete Ton Cinema?", 2);

        assertThat(parts).hasSize(2).allSatisfy(q -> assertThat(q).contains("born"));
        assertThat(server.requests()
                        .get(0)
                        .path("messages")
                        .get(0)
                        .path("content")
                        .asText())
                .contains("at most 2");
    }

    @Test
    void answersFromNumberedEvidenceAndKeepsOnlyValidCitations() {
        server.enqueue(Reply.ok("answer-ok.json"));
        LlmConfig config = new LlmConfig(server.baseUrl(), "m", "", Duration.ofSeconds(5), 0, 1, 0, 0, "");

        Answerer.Answer a = new Answerer(new OpenAiClient(config, (m, o) -> {}))
                .answer(
                        "Who designed the Analytical Engine?",
                        List.of(
                                new Answerer.Evidence(
                                        "Ada Lovelace", "Ada wrote Note G.", "Ada Lovelace wrote Note G."),
                                new Answerer.Evidence(
                                        "Analytical Engine",
                                        "It was designed by Babbage.",
                                        "The Analytical Engine was designed by Charles Babbage.")));

        assertThat(a.text()).isEqualTo("Charles Babbage");
        assertThat(a.citations()).containsExactly(2);
        String user =
                server.requests().get(0).path("messages").get(1).path("content").asText();
        assertThat(user)
                .contains("[1] Ada Lovelace")
                .contains("[2] Analytical Engine")
                .contains("Memory: The Analytical");
    }

    @Test
    void summarizesNumberedPassagesAbstractively() {
        server.enqueue(Reply.ok("summary-ok.json"));
        LlmConfig config = new LlmConfig(server.baseUrl(), "m", "", Duration.ofSeconds(5), 0, 1, 0, 0, "");

        String summary = new Summarizer(new OpenAiClient(config, (m, o) -> {}))
                .summarize(List.of("Ada Lovelace wrote Note G.", "Charles Babbage designed the Analytical Engine."));

        assertThat(summary)
                .isEqualTo("Charles Babbage designed the Analytical Engine, for which Ada Lovelace wrote Note G.");
        assertThat(server.requests()
                        .get(0)
                        .path("messages")
                        .get(1)
                        .path("content")
                        .asText())
                .contains("[1] Ada Lovelace wrote Note G.")
                .contains("[2] Charles Babbage");
        assertThat(server.requests().get(0).path("response_format").toString()).contains("summary");
    }

    @Test
    void aReplyOutsideThePromptsSchemaIsAnErrorNamingThePrompt() {
        server.enqueue(Reply.ok("answer-ok.json"), Reply.ok("extraction-fenced.json"));
        LlmConfig config = new LlmConfig(server.baseUrl(), "m", "", Duration.ofSeconds(5), 0, 1, 0, 0, "");
        Summarizer summarizer = new Summarizer(new OpenAiClient(config, (m, o) -> {}));

        // an answer where a summary was asked for: valid JSON, wrong shape
        assertThatThrownBy(() -> summarizer.summarize(List.of("x")))
                .isInstanceOf(LlmException.class)
                .hasMessageContaining("summarize-v1 reply does not match its schema");
        assertThatThrownBy(() -> summarizer.summarize(List.of("x")))
                .isInstanceOf(LlmException.class)
                .hasMessageContaining("summarize-v1 reply");
    }

    @Test
    void comoAgentsProbeCueFuseAndTryToAnswer() {
        server.enqueue(
                Reply.ok("probe-ok.json"),
                Reply.ok("cue-ok.json"),
                Reply.ok("fuse-ok.json"),
                Reply.ok("try-answer-no.json"),
                Reply.ok("try-answer-yes.json"));
        LlmConfig config = new LlmConfig(server.baseUrl(), "m", "", Duration.ofSeconds(5), 0, 1, 0, 0, "");
        ComoAgents agents = new ComoAgents(new OpenAiClient(config, (m, o) -> {}));
        String q = "When was the director of Agni born?";

        assertThat(agents.probe(q, List.of(q), List.of(), 3))
                .containsExactly("Who directed Agni?", "When was Swapan Saha born?");
        assertThat(agents.cue(q, "Who directed Agni?", List.of("Agni: a 2004 film by Swapan Saha.")))
                .isEqualTo("Key Finding: Agni (2004) was directed by Swapan Saha.");
        assertThat(agents.fuse(q, List.of("Key Finding: Agni (2004) was directed by Swapan Saha.")))
                .isEqualTo("Agni was directed by Swapan Saha.");
        assertThat(agents.tryAnswer(q, List.of("Agni: a film."), "")).isNull();
        assertThat(agents.tryAnswer(q, List.of("Swapan Saha: born 10 January 1930."), "notes"))
                .isEqualTo("10 January 1930");
        assertThat(server.requests()
                        .get(0)
                        .path("messages")
                        .get(0)
                        .path("content")
                        .asText())
                .contains("at most 3 new");
        assertThat(server.requests()
                        .get(4)
                        .path("messages")
                        .get(1)
                        .path("content")
                        .asText())
                .contains("Notes so far:\nnotes");
        assertThat(agents.fuse(q, List.of())).isEmpty(); // nothing to fuse: no call
        assertThat(server.requests()).hasSize(5);
    }

    @Test
    void parsesRetryAfterInSecondsAndDates() {
        assertThat(OpenAiClient.parseRetryAfter("3")).contains(Duration.ofSeconds(3));
        assertThat(OpenAiClient.parseRetryAfter("3600")).contains(Duration.ofMinutes(1));
        assertThat(OpenAiClient.parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"))
                .contains(Duration.ZERO);
        assertThat(OpenAiClient.parseRetryAfter("soon")).isEmpty();
        assertThat(OpenAiClient.backoff(0)).isBetween(Duration.ofMillis(125), Duration.ofMillis(375));
        assertThat(OpenAiClient.backoff(30)).isLessThanOrEqualTo(Duration.ofSeconds(45));
    }
}
