package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.processors.UnderstandingWorkers;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PendingPassage;
import dev.engram.stores.StateStores;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.LlmException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The understand step over a remote model (as with an LLM): the model is never called on the stream thread, a slow
 * call holds up only its own passage, a transient outage is waited out instead of dead-lettered, and only the latest
 * event of a passage counts. The model here is the real embedded understanding behind a scripted extractor that
 * reports itself remote and fails, stalls or counts as told by markers in the passage text.
 */
class RemoteUnderstandingTest {

    private static final Topics TOPICS = new Topics("engram.");

    @TempDir
    Path stateDir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Scripted model = new Scripted();
    private UnderstandingWorkers workers;
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> documents;
    private TestOutputTopic<String, UnderstandingEvent> understandings;
    private TestOutputTopic<String, Extraction> extractions;
    private TestOutputTopic<byte[], DeadLetter> deadLetters;
    private final List<UnderstandingEvent> understood = new ArrayList<>();
    private final List<DeadLetter> letters = new ArrayList<>();

    /** An extractor scripted by markers in the passage text, run in front of the real embedded understanding. */
    static final class Scripted implements Extractor {
        final Understander real = Understanders.embedded();
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger inCall = new AtomicInteger();
        final AtomicInteger maxInCall = new AtomicInteger();
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
        volatile int flakyFailures = 3;

        @Override
        public String id() {
            return "scripted-remote/1";
        }

        @Override
        public boolean cacheable() {
            return true;
        }

        @Override
        public boolean remote() {
            return true;
        }

        @Override
        public Extraction extract(PassageEvent.Upsert passage) {
            calls.incrementAndGet();
            threads.add(Thread.currentThread().getName());
            maxInCall.accumulateAndGet(inCall.incrementAndGet(), Math::max);
            try {
                String text = passage.text();
                if (text.contains("SLOW") || text.contains("HOLD")) {
                    await(release);
                }
                if (text.contains("BROKEN")) {
                    throw new ExtractionException("LLM returned malformed output twice: not JSON");
                }
                if (text.contains("DOWN")
                        || (text.contains("FLAKY")
                                && failures.computeIfAbsent(passage.passageId(), k -> new AtomicInteger())
                                                .incrementAndGet()
                                        <= flakyFailures)) {
                    throw new ExtractionException(
                            "LLM call failed: HTTP 503", new LlmException("HTTP 503 from the API", 503, null));
                }
                return real.extract(passage);
            } finally {
                inCall.decrementAndGet();
            }
        }

        private static void await(CountDownLatch latch) {
            try {
                assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LlmException("interrupted", -1, e);
            }
        }
    }

    private void start(int capacity, Duration retryFor) {
        Understander understander = new Understander() {
            @Override
            public Extractor extractor() {
                return model;
            }

            @Override
            public Embedder embedder() {
                return model.real.embedder();
            }

            @Override
            public Understanding embed(PassageEvent.Upsert passage, Extraction extraction) {
                return model.real.embed(passage, extraction);
            }

            @Override
            public void close() {}
        };
        Meters meters = new Meters(registry);
        workers = new UnderstandingWorkers(
                understander,
                new UnderstandingWorkers.Settings(capacity, retryFor, Duration.ofSeconds(1), Duration.ofSeconds(8)),
                meters);
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "engram-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40).withRepairInterval(Duration.ofMinutes(1)),
                        understander,
                        workers,
                        meters),
                props,
                Instant.parse("2026-01-01T00:00:00Z"));
        documents = TestTopics.input(driver, TOPICS.documents());
        understandings = TestTopics.output(driver, TOPICS.understandings());
        extractions = TestTopics.output(driver, TOPICS.extractions());
        deadLetters = TestTopics.output(driver, TOPICS.deadLetters());
    }

    @AfterEach
    void close() {
        model.release.countDown();
        if (driver != null) {
            driver.close();
        }
        if (workers != null) {
            workers.close();
        }
    }

    private void upsert(String ns, String id, String text) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("namespace", ns);
        doc.put("id", id);
        doc.put("op", "upsert");
        doc.put("title", "T");
        doc.put("text", text);
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), Json.toBytes(doc));
    }

    private void delete(String ns, String id) {
        documents.pipeInput(
                id.getBytes(StandardCharsets.UTF_8), Json.toBytes(Map.of("namespace", ns, "id", id, "op", "delete")));
    }

    /** Lets wall-clock time pass in steps of {@code step}, collecting outputs, until {@code done} or 20 s of waiting. */
    private void passTime(Duration step, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            driver.advanceWallClockTime(step);
            understood.addAll(understandings.readValuesToList());
            letters.addAll(deadLetters.readValuesToList());
            if (done.getAsBoolean()) {
                return;
            }
            assertThat(System.nanoTime()).as("still waiting").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private List<String> understoodTexts() {
        return understood.stream()
                .filter(e -> e instanceof UnderstandingEvent.Understood)
                .map(e -> ((UnderstandingEvent.Understood) e).passage().text())
                .toList();
    }

    private long retractions() {
        return understood.stream()
                .filter(e -> e instanceof UnderstandingEvent.Retracted)
                .count();
    }

    private long pendingPassages() {
        KeyValueStore<String, PendingPassage> pending = driver.getKeyValueStore(StateStores.UNDERSTAND_PENDING.name());
        long n = 0;
        try (KeyValueIterator<String, PendingPassage> it = pending.all()) {
            for (; it.hasNext(); it.next()) {
                n++;
            }
        }
        return n;
    }

    /** Every worker slot is free again. */
    private void assertSlotsBack(int capacity) throws InterruptedException {
        passTime(Duration.ofMillis(200), () -> workers.idle() == capacity);
    }

    private double gauge(String name) {
        return registry.get(name).gauge().value();
    }

    private DocumentRecord document(String ns, String id) {
        KeyValueStore<String, DocumentRecord> kv = driver.getKeyValueStore(StateStores.MEMORY_DOCUMENTS.name());
        return kv.get(Keys.of(ns, id));
    }

    @Test
    void aSlowCallHoldsUpOnlyItsOwnPassageAndNeverRunsOnTheStreamThread() throws InterruptedException {
        start(8, Duration.ofHours(1));

        upsert("wiki", "d", "# One\n\nAda Lovelace was SLOW to publish.\n\n# Two\n\nCharles Babbage lived in London.");
        passTime(Duration.ofMillis(200), () -> understoodTexts().size() == 1);

        assertThat(understoodTexts()).containsExactly("Charles Babbage lived in London.");
        assertThat(pendingPassages()).isEqualTo(1);
        assertThat(gauge(Meters.UNDERSTAND_PENDING)).isEqualTo(1);
        assertThat(document("wiki", "d").status()).isNotEqualTo(DocumentStatus.VERIFIED);

        model.release.countDown();
        passTime(Duration.ofMillis(200), () -> understoodTexts().size() == 2);

        assertThat(understoodTexts()).endsWith("Ada Lovelace was SLOW to publish.");
        assertThat(pendingPassages()).isZero();
        assertThat(gauge(Meters.UNDERSTAND_PENDING)).isZero();
        assertThat(document("wiki", "d").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(model.threads).allSatisfy(t -> assertThat(t).startsWith("engram-understand-"));
        assertThat(extractions.readValuesToList())
                .as("both extractions are cached")
                .hasSize(2);
        assertThat(letters).isEmpty();
        assertSlotsBack(8);
    }

    @Test
    void aTransientOutageIsWaitedOutWithBackoffNotDeadLettered() throws InterruptedException {
        start(8, Duration.ofHours(1));

        upsert("wiki", "d", "Ada Lovelace met Charles Babbage. The API was FLAKY.");
        // Backoffs of 1, 2 and 4 s: the passage is tried four times, then understood.
        passTime(Duration.ofMillis(500), () -> !understoodTexts().isEmpty());

        assertThat(model.calls).hasValue(4);
        assertThat(letters).isEmpty();
        assertThat(registry.get(Meters.UNDERSTAND_RETRIES).counter().count()).isEqualTo(3);
        assertThat(document("wiki", "d").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertSlotsBack(8);
    }

    @Test
    void anOutageLongerThanTheRetryWindowDeadLettersThePassage() throws InterruptedException {
        start(8, Duration.ofSeconds(30));

        upsert("wiki", "d", "# One\n\nThe API is DOWN for this one.\n\n# Two\n\nAda Lovelace lived in London.");
        passTime(Duration.ofSeconds(2), () -> !letters.isEmpty());

        assertThat(letters).singleElement().satisfies(l -> {
            assertThat(l.cause()).isEqualTo(DeadLetter.Cause.EXTRACTOR_UNAVAILABLE);
            assertThat(l.stage()).isEqualTo(DeadLetter.Stage.UNDERSTAND);
            assertThat(l.reason()).contains("kept failing").contains("503");
            assertThat(l.topic()).isEqualTo(TOPICS.passages().name());
            assertThat(l.offset()).isNotNegative();
        });
        assertThat(understoodTexts()).containsExactly("Ada Lovelace lived in London.");
        assertThat(pendingPassages()).isZero();
        assertSlotsBack(8);
    }

    @Test
    void aPassageTheModelCannotReadIsDeadLetteredAtOnce() throws InterruptedException {
        start(8, Duration.ofHours(1));

        upsert("wiki", "d", "This one is BROKEN.");
        passTime(Duration.ofMillis(200), () -> !letters.isEmpty());

        assertThat(model.calls).hasValue(1);
        assertThat(letters).singleElement().satisfies(l -> {
            assertThat(l.cause()).isEqualTo(DeadLetter.Cause.EXTRACTOR_ERROR);
            assertThat(l.reason()).contains("malformed output");
            assertThat(l.topic()).isEqualTo(TOPICS.passages().name());
            assertThat(l.partition()).isZero();
            assertThat(l.offset()).isZero();
            assertThat(new String(Base64.getDecoder().decode(l.valueBase64()), StandardCharsets.UTF_8))
                    .contains("BROKEN");
        });
        assertThat(pendingPassages()).isZero();
        assertSlotsBack(8);
    }

    @Test
    void aRetractionAndALaterUpsertReplaceAPendingOne() throws InterruptedException {
        start(8, Duration.ofHours(1));

        upsert("wiki", "d", "Ada Lovelace was SLOW to publish.");
        delete("wiki", "d");
        passTime(Duration.ofMillis(200), () -> retractions() == 1);
        assertThat(pendingPassages())
                .as("the retraction drops the pending upsert")
                .isZero();

        upsert("wiki", "d", "Ada Lovelace was SLOW to publish.");
        passTime(Duration.ofMillis(50), () -> workers.sharedCalls() == 1); // the second waits on the first's call
        model.release.countDown();
        passTime(Duration.ofMillis(200), () -> !understoodTexts().isEmpty());
        passTime(Duration.ofMillis(200), () -> pendingPassages() == 0);

        List<UnderstandingEvent.Understood> events = understood.stream()
                .filter(e -> e instanceof UnderstandingEvent.Understood)
                .map(e -> (UnderstandingEvent.Understood) e)
                .toList();
        assertThat(events)
                .as("the first upsert's outcome is dropped; the second is understood once")
                .singleElement()
                .satisfies(e -> assertThat(e.passage().documentVersion())
                        .as("upsert, delete, upsert")
                        .isEqualTo(3));
        assertThat(model.calls).as("both hand-overs shared one call").hasValue(1);
        assertThat(extractions.readValuesToList())
                .as("the call was paid for: its extraction is cached though its first passage was dropped")
                .hasSize(1);
        assertThat(document("wiki", "d").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertSlotsBack(8);
    }

    @Test
    void theProcessHoldsNoMorePassagesThanItsCapacity() throws InterruptedException {
        start(2, Duration.ofHours(1));

        String text = "# One\n\nAda Lovelace HOLDS notes.\n\n# Two\n\nBabbage HOLDS engines.\n\n# Three\n\n"
                + "London HOLDS rain.\n\n# Four\n\nParis HOLDS art.";
        upsert("a", "d", text);
        passTime(Duration.ofMillis(200), () -> model.calls.get() == 2);
        for (int i = 0; i < 5; i++) {
            passTime(Duration.ofMillis(200), () -> true);
        }
        assertThat(model.calls)
                .as("two slots: two calls, the other passages wait")
                .hasValue(2);
        assertThat(pendingPassages()).isEqualTo(4);

        model.release.countDown();
        upsert("b", "d", text);
        passTime(Duration.ofMillis(200), () -> understoodTexts().size() == 8);

        assertThat(model.maxInCall).hasValueLessThanOrEqualTo(2);
        assertThat(document("a", "d").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(document("b", "d").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(pendingPassages()).isZero();
        assertSlotsBack(2);
    }
}
