package dev.engram.service;

import static dev.engram.service.ItSupport.awaitVerified;
import static dev.engram.service.ItSupport.get;
import static dev.engram.service.ItSupport.send;
import static dev.engram.service.ItSupport.upsert;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.DeadLetter;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.Topics;
import dev.engram.understanding.llm.FakeOpenAiServer;
import dev.engram.understanding.llm.FakeOpenAiServer.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The LLM understanding through the real broker, with exactly-once transactions far shorter than the model's calls:
 * a stalled call holds up only its own passage, a transient outage (503, 429) is waited out instead of dead-lettered,
 * and a passage whose call was cut by a shutdown is understood after the restart. No LLM runs on the test machines:
 * the model is a loopback server speaking the OpenAI protocol with recorded replies.
 */
@ExtendWith(SharedKafkaBroker.class)
class RemoteModelIT {

    private static final String NS = "remote";

    @TempDir
    Path state;

    @Test
    void slowFailingAndInterruptedModelCallsStayOutOfTheStreamAndLoseNothing(EmbeddedKafkaBroker broker)
            throws Exception {
        CountDownLatch slowCall = new CountDownLatch(1);
        CountDownLatch neverAnswered = new CountDownLatch(1);
        try (FakeOpenAiServer llm = new FakeOpenAiServer()) {
            llm.enqueueFor("Grace Hopper", Reply.okAfter("extraction-ok.json", slowCall));
            llm.enqueueFor(
                    "Alan Turing",
                    Reply.status(503, "error-500.json"),
                    Reply.status(503, "error-500.json"),
                    Reply.status(429, "error-429.json"),
                    Reply.ok("extraction-ok.json"));
            llm.enqueueFor("Hedy Lamarr", Reply.ok("extraction-ok.json"));
            // cut by the shutdown below, then answered after the restart
            llm.enqueueFor(
                    "Katherine Johnson",
                    Reply.okAfter("extraction-ok.json", neverAnswered),
                    Reply.ok("extraction-ok.json"));
            String id = "remote-" + UUID.randomUUID().toString().substring(0, 8);
            Map<String, String> env = Map.of(
                    "ENGRAM_UNDERSTANDING", "llm",
                    "ENGRAM_LLM_BASE_URL", llm.baseUrl().toString(),
                    "ENGRAM_LLM_MODEL", "test-model",
                    "ENGRAM_LLM_MAX_RETRIES", "0",
                    "ENGRAM_UNDERSTAND_BACKOFF_MS", "100",
                    "ENGRAM_UNDERSTAND_MAX_BACKOFF_MS", "400",
                    // far shorter than the stalled call: a call inside a transaction would outlive it
                    "ENGRAM_KAFKA_TRANSACTION_TIMEOUT_MS", "3000");
            EngramConfig config = ItSupport.config(broker.bootstrapServers(), id, id + ".", state, 2, env);
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
                try (EngramService service = EngramService.start(config)) {
                    assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
                    String base = "http://127.0.0.1:" + service.httpPort();
                    String documents = service.topics().documents().name();
                    send(producer, documents, "hopper", upsert(NS, "hopper", "Hopper", "Grace Hopper wrote code."));
                    awaitRequest(llm, "Grace Hopper");
                    send(producer, documents, "turing", upsert(NS, "turing", "Turing", "Alan Turing broke codes."));
                    send(producer, documents, "lamarr", upsert(NS, "lamarr", "Lamarr", "Hedy Lamarr made radios."));

                    awaitVerified(base, NS, List.of("turing", "lamarr"));
                    assertThat(status(base, "hopper"))
                            .as("its call is still open, and nothing else waited for it")
                            .isNotEqualTo("VERIFIED");
                    Thread.sleep(3500); // outlive the transaction timeout with the call still open
                    slowCall.countDown();
                    awaitVerified(base, NS, List.of("hopper"));

                    assertThat(llm.requestsFor("Alan Turing")).isEqualTo(4);
                    String metrics = get(base + "/metrics").raw().body();
                    assertThat(value(metrics, "engram_understand_retries_total"))
                            .isEqualTo(3);
                    assertThat(value(metrics, "engram_understand_pending")).isZero();
                    // the dashboard's LLM panels: calls, tokens and cost are exported once an LLM answered
                    for (String llmSeries :
                            List.of("engram_llm_calls_total", "engram_llm_tokens_total", "engram_llm_cost_usd_total")) {
                        assertThat(metrics).as(llmSeries).containsPattern("(?m)^" + llmSeries + "\\{");
                    }

                    send(
                            producer,
                            documents,
                            "johnson",
                            upsert(NS, "johnson", "Johnson", "Katherine Johnson computed orbits."));
                    awaitRequest(llm, "Katherine Johnson");
                }
                try (EngramService restarted = EngramService.start(config)) {
                    assertThat(restarted.awaitRunning(Duration.ofSeconds(60))).isTrue();
                    String base = "http://127.0.0.1:" + restarted.httpPort();
                    awaitVerified(base, NS, List.of("johnson", "hopper", "turing", "lamarr"));
                    assertThat(llm.requestsFor("Katherine Johnson")).isEqualTo(2);
                    assertThat(llm.requestsFor("Grace Hopper"))
                            .as("the extraction cache spares a call already answered")
                            .isEqualTo(1);
                }
            } finally {
                slowCall.countDown();
                neverAnswered.countDown();
            }
            List<DeadLetter> letters = ItSupport.deadLetters(broker.bootstrapServers(), new Topics(id + "."), 0);
            assertThat(letters).as("nothing was dead-lettered").isEmpty();
        }
    }

    @Test
    void anInstanceKilledWhileTheModelIsAnsweringUnderstandsThePassageAfterItsRestart(EmbeddedKafkaBroker broker)
            throws Exception {
        CountDownLatch cut = new CountDownLatch(1);
        try (FakeOpenAiServer llm = new FakeOpenAiServer()) {
            llm.enqueueFor(
                    "Dorothy Vaughan",
                    Reply.okAfter("extraction-ok.json", cut), // never answered: the instance dies meanwhile
                    Reply.ok("extraction-ok.json"));
            String id = "remote-kill-" + UUID.randomUUID().toString().substring(0, 8);
            Map<String, String> env =
                    ItSupport.environment(broker.bootstrapServers(), id, id + ".", state, 2, ItSupport.freePort());
            env.putAll(Map.of(
                    "ENGRAM_UNDERSTANDING", "llm",
                    "ENGRAM_LLM_BASE_URL", llm.baseUrl().toString(),
                    "ENGRAM_LLM_MODEL", "test-model",
                    "ENGRAM_LLM_MAX_RETRIES", "0",
                    "ENGRAM_INSTANCE_ID", "remote-kill"));
            ServiceProcess first = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-1.log"));
            try (KafkaProducer<String, byte[]> producer = ItSupport.producer(broker.bootstrapServers())) {
                send(
                        producer,
                        first.topics().documents().name(),
                        "vaughan",
                        upsert(NS, "vaughan", "Vaughan", "Dorothy Vaughan led the computing unit."));
                awaitRequest(llm, "Dorothy Vaughan");
                first.process().destroyForcibly(); // SIGKILL with the passage pending and its call open
                assertThat(first.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            ServiceProcess second = ServiceProcess.start(env, ServiceProcess.LOGS.resolve(id + "-2.log"));
            try {
                awaitVerified(second.base(), NS, List.of("vaughan"));
                assertThat(llm.requestsFor("Dorothy Vaughan")).isEqualTo(2);
            } finally {
                second.process().destroy();
                second.process().waitFor(60, TimeUnit.SECONDS);
                cut.countDown();
            }
            assertThat(ItSupport.deadLetters(broker.bootstrapServers(), new Topics(id + "."), 0))
                    .isEmpty();
        }
    }

    private static String status(String base, String doc) {
        return get(base + "/v1/namespaces/" + NS + "/documents/" + doc)
                .body()
                .path("status")
                .asText();
    }

    private static void awaitRequest(FakeOpenAiServer llm, String text) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (llm.requestsFor(text) == 0) {
            assertThat(System.nanoTime()).as("no request for " + text).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static double value(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + "(?:\\{[^}]*})? (\\S+)$").matcher(metrics);
        assertThat(m.find()).as(name).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
