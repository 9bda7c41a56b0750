package dev.engram.service;

import static dev.engram.service.ItSupport.awaitVerified;
import static dev.engram.service.ItSupport.post;
import static dev.engram.service.ItSupport.send;
import static dev.engram.service.ItSupport.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.Understanders;
import dev.engram.understanding.llm.FakeOpenAiServer;
import dev.engram.understanding.llm.FakeOpenAiServer.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /answer} end to end: documents through a real broker into memory, retrieval through the service, and
 * the answer from an OpenAI-compatible API. No generative model can run on the test machines, so the API is a
 * loopback stand-in speaking the same protocol with recorded replies; the real path runs against any
 * OpenAI-compatible server with the same settings. (The passages are understood by the embedded understanding here,
 * so the stand-in sees exactly the query decomposition and the answer.)
 */
@ExtendWith(SharedKafkaBroker.class)
class AnswerIT {

    private static final String NS = "answers";

    @TempDir
    Path state;

    @Test
    void answersFromRetrievedEvidenceWithCitations(EmbeddedKafkaBroker broker) throws Exception {
        try (FakeOpenAiServer llm = new FakeOpenAiServer()) {
            llm.enqueue(
                    Reply.ok("decompose-ok.json"),
                    Reply.ok("answer-ok.json"),
                    Reply.ok("try-answer-no.json"),
                    Reply.ok("cue-ok.json"),
                    Reply.ok("probe-ok.json"),
                    Reply.ok("cue-ok.json"),
                    Reply.ok("cue-ok.json"),
                    Reply.ok("fuse-ok.json"),
                    Reply.ok("try-answer-yes.json"),
                    Reply.ok("summary-ok.json"));
            String id = "answer-" + UUID.randomUUID().toString().substring(0, 8);
            EngramConfig config = ItSupport.config(
                    broker.bootstrapServers(),
                    id,
                    id + ".",
                    state,
                    1,
                    Map.of(
                            "ENGRAM_UNDERSTANDING", "llm",
                            "ENGRAM_LLM_BASE_URL", llm.baseUrl().toString(),
                            "ENGRAM_LLM_MODEL", "test-model",
                            "ENGRAM_LLM_MAX_RETRIES", "0"));
            try (EngramService service = EngramService.start(config, Understanders.embedded());
                    KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
                assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
                String base = "http://127.0.0.1:" + service.httpPort();
                String documents = service.topics().documents().name();
                send(producer, documents, "ada", upsert(NS, "ada", "Ada Lovelace", "Ada Lovelace wrote Note G."));
                send(
                        producer,
                        documents,
                        "engine",
                        upsert(NS, "engine", "Analytical Engine", "Charles Babbage designed the Analytical Engine."));
                List<String> ids = new ArrayList<>(List.of("ada", "engine"));
                for (int i = 0; i < 16; i++) {
                    String doc = "station-" + i;
                    ids.add(doc);
                    send(
                            producer,
                            documents,
                            doc,
                            upsert(
                                    NS,
                                    doc,
                                    "Station " + i,
                                    "Station " + i + " in Vienna measured rain in May " + i + "."));
                }
                awaitVerified(base, NS, ids);

                ItSupport.Response r = post(
                        base + "/v1/namespaces/" + NS + "/answer",
                        "{\"query\": \"Who designed the Analytical Engine?\", \"top_k\": 2}");

                assertThat(r.status()).isEqualTo(200);
                JsonNode body = r.body();
                assertThat(body.path("answer").asText()).isEqualTo("Charles Babbage");
                // the recorded reply cites evidence 2 (twice) and 9 (out of range): only [2] is kept
                assertThat(body.path("citations")).hasSize(1);
                assertThat(body.path("evidence")).hasSize(2);
                JsonNode answerRequest = llm.requests().get(llm.requests().size() - 1);
                String prompt =
                        answerRequest.path("messages").get(1).path("content").asText();
                assertThat(prompt)
                        .contains("Question: Who designed the Analytical Engine?")
                        .contains("Charles Babbage designed the Analytical Engine.");

                // como with the LLM agents: no answer at first, one round of probing, then an answer.
                ItSupport.Response como = post(
                        base + "/v1/namespaces/" + NS + "/retrieve",
                        "{\"query\": \"Who designed the Analytical Engine?\", \"mode\": \"como\", \"top_k\": 2}");
                assertThat(como.status()).isEqualTo(200);
                JsonNode explanation = como.body().path("explanation");
                assertThat(explanation.path("answer").asText()).isEqualTo("10 January 1930");
                assertThat(explanation.path("rounds")).hasSize(2);
                assertThat(explanation.path("rounds").get(1).path("probes"))
                        .extracting(JsonNode::asText)
                        .containsExactly("Who directed Agni?", "When was Swapan Saha born?");
                assertThat(llm.requests()).hasSize(9);

                // Theme summaries are written by the LLM on request (never in the memory step), and kept; a
                // failed call (the stand-in has no more replies: 500) keeps the extractive summary.
                JsonNode themes = ItSupport.get(base + "/v1/namespaces/" + NS + "/themes")
                        .body()
                        .path("themes");
                assertThat(themes.size()).isGreaterThanOrEqualTo(2);
                assertThat(themes.get(0).path("summary_kind").asText()).isEqualTo("abstractive");
                assertThat(themes.get(0).path("summary").asText())
                        .isEqualTo(
                                "Charles Babbage designed the Analytical Engine, for which Ada Lovelace wrote Note G.");
                assertThat(themes.get(1).path("summary_kind").asText()).isEqualTo("extractive");
                JsonNode again = ItSupport.get(base + "/v1/namespaces/" + NS + "/themes")
                        .body()
                        .path("themes");
                assertThat(again.get(0).path("summary").asText())
                        .isEqualTo(themes.get(0).path("summary").asText());
            }
        }
    }
}
