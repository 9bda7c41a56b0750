package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.PendingPassage;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoreSpec;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.LlmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The understand step's bookkeeping over a remote model, driven by hand: Kafka Streams may close a task and initialize
 * the same processor again (after a corrupted task or a commit timeout under exactly-once), and every worker slot a
 * passage took must come back whatever became of it.
 */
class UnderstandProcessorTest {

    private static final int CAPACITY = 2;

    private final CountDownLatch gate = new CountDownLatch(1);
    private final AtomicInteger calls = new AtomicInteger();
    /** The passages handed to the remote model, in the order they were handed over. */
    private final List<String> handedOver = Collections.synchronizedList(new ArrayList<>());

    private final AtomicInteger embedFailures = new AtomicInteger();
    private final MockProcessorContext<Void, Emission> context = new MockProcessorContext<>();
    private final UnderstandingWorkers workers = new UnderstandingWorkers(
            new Remote(),
            new UnderstandingWorkers.Settings(
                    CAPACITY, Duration.ofHours(1), Duration.ofMillis(10), Duration.ofMillis(10)),
            Meters.detached());
    private long now = 1_000_000;

    /** A remote model: extraction waits for {@link #gate}; embedding fails transiently while asked to. */
    private final class Remote implements Understander, Extractor, Embedder {
        @Override
        public Extractor extractor() {
            return this;
        }

        @Override
        public Embedder embedder() {
            return this;
        }

        @Override
        public String id() {
            return "remote/1";
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
            handedOver.add(passage.passageId());
            try {
                assertThat(gate.await(30, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LlmException("interrupted", -1, e);
            }
            return new Extraction(passage.text(), List.of(), List.of(), List.of(), List.of(), "remote/1", null, null);
        }

        @Override
        public String modelId() {
            return "remote-embedder";
        }

        @Override
        public int dimensions() {
            return 2;
        }

        @Override
        public float[] embed(String text) {
            if (embedFailures.getAndDecrement() > 0) {
                throw new LlmException("HTTP 503", 503, null);
            }
            return new float[] {1, 0};
        }

        @Override
        public Understanding embed(PassageEvent.Upsert passage, Extraction extraction) {
            float[] v = embed(passage.text());
            return new Understanding(extraction, new Embeddings(v, v, List.of(), List.of(), List.of()), modelId());
        }

        @Override
        public void close() {}
    }

    UnderstandProcessorTest() {
        KeyValueStore<String, PendingPassage> store = Stores.keyValueStoreBuilder(
                        Stores.inMemoryKeyValueStore(StateStores.UNDERSTAND_PENDING.name()),
                        StoreSpec.KEY,
                        StateStores.UNDERSTAND_PENDING.values())
                .withLoggingDisabled()
                .build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
        KeyValueStore<String, Extraction> cache = Stores.keyValueStoreBuilder(
                        Stores.inMemoryKeyValueStore(StateStores.EXTRACTION_CACHE.name()),
                        StoreSpec.KEY,
                        StateStores.EXTRACTION_CACHE.values())
                .withLoggingDisabled()
                .build();
        cache.init(context.getStateStoreContext(), cache);
        context.addStateStore(cache);
        KeyValueStore<String, Long> tally = Stores.keyValueStoreBuilder(
                        Stores.inMemoryKeyValueStore(StateStores.UNDERSTAND_TALLY.name()),
                        StoreSpec.KEY,
                        StateStores.UNDERSTAND_TALLY.values())
                .withLoggingDisabled()
                .build();
        tally.init(context.getStateStoreContext(), tally);
        context.addStateStore(tally);
        context.setRecordMetadata("engram.passages", 0, 7);
    }

    @AfterEach
    void closeWorkers() {
        gate.countDown();
        workers.close();
    }

    private static PassageEvent.Upsert passage(String id) {
        return new PassageEvent.Upsert(
                "ns", "doc", 1, id, 0, "hash-" + id, "T", List.of(), "Text of " + id, 0, 10, null, null);
    }

    private void punctuate() {
        now += 100;
        context.setCurrentSystemTimeMs(now);
        List<MockProcessorContext.CapturedPunctuator> punctuators = context.scheduledPunctuators();
        punctuators.get(punctuators.size() - 1).getPunctuator().punctuate(now);
    }

    private void until(BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            punctuate();
            Thread.sleep(10);
        }
    }

    private long understood() {
        return context.forwarded().stream()
                .filter(f -> f.record().value() instanceof Emission.Understood u
                        && u.event() instanceof UnderstandingEvent.Understood)
                .count();
    }

    private long extracted() {
        return context.forwarded().stream()
                .filter(f -> f.record().value() instanceof Emission.Extracted)
                .count();
    }

    @Test
    void aTaskInitializedAgainOnTheSameProcessorUnderstandsItsPendingPassagesAndKeepsNoSlot()
            throws InterruptedException {
        Processor<String, PassageEvent, Void, Emission> step = UnderstandProcessor.deferred(
                        workers, StateStores.EXTRACTION_CACHE.name(), ExtractionCacheScope.NAMESPACE, Meters.detached())
                .get();
        step.init(context);
        for (String id : List.of("a", "b", "c")) {
            step.process(new Record<>(id, passage(id), now));
        }
        assertThat(workers.idle()).as("two in calls, the third waits").isZero();

        step.close(); // as Streams does with a corrupted task, before initializing it again
        step.init(context);
        gate.countDown();
        until(() -> understood() == 3);

        assertThat(workers.idle()).as("every slot came back").isEqualTo(CAPACITY);
        assertThat(calls.get() + workers.sharedCalls())
                .as("the closed run's two calls end unheard; the new run calls (or joins a call still running) for all "
                        + "three")
                .isEqualTo(5);
    }

    @Test
    void anExtractionPaidForIsKeptWhenEmbeddingFailsAndNotBoughtAgain() throws InterruptedException {
        gate.countDown();
        embedFailures.set(2);
        Processor<String, PassageEvent, Void, Emission> step = UnderstandProcessor.deferred(
                        workers, StateStores.EXTRACTION_CACHE.name(), ExtractionCacheScope.NAMESPACE, Meters.detached())
                .get();
        step.init(context);
        step.process(new Record<>("a", passage("a"), now));
        until(() -> understood() == 1);

        assertThat(extracted()).as("the extraction is cached once").isEqualTo(1);
        assertThat(workers.idle()).isEqualTo(CAPACITY);
        assertThat(calls)
                .as("two failed embeddings later, the extraction was still bought once")
                .hasValue(1);
    }

    @Test
    void aRetractionOfAPassageInItsCallGivesTheSlotBackWhenTheCallEnds() throws InterruptedException {
        Processor<String, PassageEvent, Void, Emission> step = UnderstandProcessor.deferred(
                        workers, StateStores.EXTRACTION_CACHE.name(), ExtractionCacheScope.NAMESPACE, Meters.detached())
                .get();
        step.init(context);
        step.process(new Record<>("a", passage("a"), now));
        step.process(
                new Record<>("a", new PassageEvent.Retraction("ns", "doc", 2, "a", PassageEvent.Reason.DELETED), now));
        assertThat(workers.idle()).as("the call still runs").isEqualTo(CAPACITY - 1);

        gate.countDown();
        until(() -> workers.idle() == CAPACITY);
        assertThat(understood()).isZero();
    }

    // ---- namespaces' turns -------------------------------------------------------------------------------------

    /** The clock of the local model's time: each extraction takes 10 ms of it. */
    private final AtomicLong fakeNanos = new AtomicLong();

    /** A local model that takes {@link #fakeNanos} 10 ms per passage. */
    private final class Local implements Understander, Extractor, Embedder {
        @Override
        public Extractor extractor() {
            return this;
        }

        @Override
        public Embedder embedder() {
            return this;
        }

        @Override
        public String id() {
            return "local/1";
        }

        @Override
        public boolean cacheable() {
            return false;
        }

        @Override
        public boolean remote() {
            return false;
        }

        @Override
        public Extraction extract(PassageEvent.Upsert passage) {
            fakeNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
            return new Extraction(passage.text(), List.of(), List.of(), List.of(), List.of(), "local/1", null, null);
        }

        @Override
        public String modelId() {
            return "local-embedder";
        }

        @Override
        public int dimensions() {
            return 2;
        }

        @Override
        public float[] embed(String text) {
            return new float[] {1, 0};
        }

        @Override
        public Understanding embed(PassageEvent.Upsert passage, Extraction extraction) {
            float[] v = embed(passage.text());
            return new Understanding(extraction, new Embeddings(v, v, List.of(), List.of(), List.of()), modelId());
        }

        @Override
        public void close() {}
    }

    private Processor<String, PassageEvent, Void, Emission> localStep() {
        UnderstandProcessor.Fairness fairness = new UnderstandProcessor.Fairness(
                Duration.ofSeconds(1),
                Duration.ofMillis(250),
                Duration.ofSeconds(1),
                Duration.ofMillis(500),
                10_000,
                fakeNanos::get);
        Processor<String, PassageEvent, Void, Emission> step = UnderstandProcessor.supplier(
                        new Local(), null, ExtractionCacheScope.NAMESPACE, Meters.detached(), fairness)
                .get();
        context.setCurrentSystemTimeMs(now);
        step.init(context);
        return step;
    }

    private static PassageEvent.Upsert passage(String ns, String id) {
        return new PassageEvent.Upsert(
                ns, "doc-" + ns, 1, id, 0, "hash-" + id, "T", List.of(), "Text of " + id, 0, 10, null, null);
    }

    /** The passages understood so far, in the order they were emitted. */
    private List<String> understoodIds() {
        return context.forwarded().stream()
                .filter(f -> f.record().value() instanceof Emission.Understood u
                        && u.event() instanceof UnderstandingEvent.Understood)
                .map(f -> ((UnderstandingEvent.Understood)
                                ((Emission.Understood) f.record().value()).event())
                        .passage()
                        .passageId())
                .toList();
    }

    @Test
    void aLargeBacklogOfOneNamespaceDoesNotHoldUpAnothersPassages() {
        Processor<String, PassageEvent, Void, Emission> step = localStep();
        long late = now - 5_000; // the step is behind: these were written five seconds ago
        for (int i = 0; i < 100; i++) {
            step.process(new Record<>("big-" + i, passage("big", "big-" + i), late));
        }
        for (int i = 0; i < 3; i++) {
            step.process(new Record<>("small-" + i, passage("small", "small-" + i), late));
        }
        List<String> first = understoodIds();
        assertThat(first)
                .as("the big namespace used its share (250 ms of 10 ms passages), then the small one's came at once")
                .hasSize(29)
                .endsWith("small-0", "small-1", "small-2");
        assertThat(first.subList(0, 26)).allMatch(id -> id.startsWith("big-"));

        punctuate();
        punctuate();
        List<String> all = understoodIds();
        assertThat(all).hasSize(103).doesNotHaveDuplicates();
        assertThat(all.subList(29, 103))
                .as("the rest in their order")
                .containsExactlyElementsOf(
                        IntStream.range(26, 100).mapToObj(i -> "big-" + i).toList());
        KeyValueStore<String, PendingPassage> pending = context.getStateStore(StateStores.UNDERSTAND_PENDING.name());
        assertThat(pending.approximateNumEntries()).isZero();
    }

    @Test
    void aStepThatKeepsUpUnderstandsEveryPassageAsItComes() {
        Processor<String, PassageEvent, Void, Emission> step = localStep();
        for (int i = 0; i < 100; i++) {
            step.process(new Record<>("big-" + i, passage("big", "big-" + i), now));
        }
        assertThat(understoodIds()).as("on time: no passage is set aside").hasSize(100);
    }

    @Test
    void aPassageSetAsideIsReplacedByItsNewerUpsertAndDroppedByItsRetraction() {
        Processor<String, PassageEvent, Void, Emission> step = localStep();
        long late = now - 5_000;
        for (int i = 0; i < 40; i++) {
            step.process(new Record<>("big-" + i, passage("big", "big-" + i), late));
        }
        assertThat(understoodIds()).hasSize(26);
        PassageEvent.Upsert newer = new PassageEvent.Upsert(
                "big", "doc-big", 2, "big-30", 0, "hash-big-30", "T", List.of(), "Newer text", 0, 10, null, null);
        step.process(new Record<>("big-30", newer, late));
        step.process(new Record<>(
                "big-31",
                new PassageEvent.Retraction("big", "doc-big", 2, "big-31", PassageEvent.Reason.DELETED),
                late));

        punctuate();
        List<String> all = understoodIds();
        assertThat(all).hasSize(39).doesNotContain("big-31").doesNotHaveDuplicates();
        assertThat(context.forwarded().stream()
                        .filter(f -> f.record().value() instanceof Emission.Understood u
                                && u.event() instanceof UnderstandingEvent.Understood e
                                && e.passage().passageId().equals("big-30"))
                        .map(f -> ((UnderstandingEvent.Understood)
                                        ((Emission.Understood) f.record().value()).event())
                                .passage()
                                .text()))
                .containsExactly("Newer text");
    }

    @Test
    void aPassageSetAsideSurvivesARestartOfItsTask() {
        Processor<String, PassageEvent, Void, Emission> step = localStep();
        long late = now - 5_000;
        for (int i = 0; i < 40; i++) {
            step.process(new Record<>("big-" + i, passage("big", "big-" + i), late));
        }
        step.close();
        step.init(context);
        punctuate();
        assertThat(understoodIds()).hasSize(40).doesNotHaveDuplicates();
    }

    @Test
    void passagesWaitingForAWorkerAreHandedOverRoundTheNamespaces() throws InterruptedException {
        Processor<String, PassageEvent, Void, Emission> step = UnderstandProcessor.deferred(
                        workers, StateStores.EXTRACTION_CACHE.name(), ExtractionCacheScope.NAMESPACE, Meters.detached())
                .get();
        step.init(context);
        for (int i = 0; i < 10; i++) {
            step.process(new Record<>("big-" + i, passage("big", "big-" + i), now));
        }
        step.process(new Record<>("small-0", passage("small", "small-0"), now));
        gate.countDown();
        until(() -> understood() == 11);
        // Two in calls at once: the small namespace's passage goes with the first hand-over after them, not last. The
        // order of hand-over is the step's; the order calls finish in is the threads', so it is not what is checked.
        assertThat(handedOver.indexOf("small-0")).isBetween(2, 3);
    }
}
