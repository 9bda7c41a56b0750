package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.EventPosition;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.JsonSerde;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredVectors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.LongStream;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory step record by record: a record that fails part-way, after it made its changes, leaves the stores, the
 * namespace's counters and versions and the memory-changes topic exactly as they were, and the next record goes on as
 * if it had never been.
 */
class ConstructProcessorTest {

    private static final String NS = "wiki";
    private static final String TOPIC = "understandings";
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private static final JsonSerde<UnderstandingEvent> EVENTS = JsonSerde.of(UnderstandingEvent.class);

    private static final String P1 = "Ada Lovelace met Charles Babbage in London.";
    private static final String P2 = "Babbage and Lovelace worked on the Analytical Engine.";

    @TempDir
    Path dir;

    private final List<TopologyTestDriver> drivers = new ArrayList<>();

    @AfterEach
    void close() {
        drivers.forEach(TopologyTestDriver::close);
    }

    /** The memory step alone, its emissions captured in order. */
    private final class Memory {
        final List<Emission> emitted = new ArrayList<>();
        final TopologyTestDriver driver;
        final TestInputTopic<String, UnderstandingEvent> input;

        Memory(String name, ConstructProcessor.Fault fault) {
            Topology topology = new Topology();
            topology.addSource("in", new StringDeserializer(), EVENTS.deserializer(), TOPIC);
            topology.addProcessor("construct", ConstructProcessor.supplier(Meters.detached(), fault), "in");
            topology.addProcessor(
                    "capture", () -> (Processor<Void, Emission, Void, Void>) r -> emitted.add(r.value()), "construct");
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "construct-" + name);
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
            props.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve(name).toString());
            driver = new TopologyTestDriver(topology, props, NOW);
            drivers.add(driver);
            input = driver.createInputTopic(TOPIC, new StringSerializer(), EVENTS.serializer());
        }

        void pipe(UnderstandingEvent event) {
            input.pipeInput(NS, event);
        }

        /** Every entry of every memory store, values as JSON (bytes as base64), by store and key. */
        Map<String, Map<String, String>> stores() {
            return MemoryFixture.contents(driver::getKeyValueStore);
        }

        NamespaceState namespace() {
            KeyValueStore<String, NamespaceState> store = driver.getKeyValueStore(StateStores.MEMORY_NAMESPACES.name());
            return store.get(NS);
        }

        List<MemoryChange> changes() {
            return emitted.stream()
                    .filter(e -> e instanceof Emission.Change)
                    .map(e -> ((Emission.Change) e).change())
                    .toList();
        }

        List<DeadLetter> deadLetters() {
            return emitted.stream()
                    .filter(e -> e instanceof Emission.Dead)
                    .map(e -> ((Emission.Dead) e).letter())
                    .toList();
        }
    }

    // ---- hand-built events -----------------------------------------------------------------------------------------

    private static Extraction.Entity mention(String text, String name, EntityType type) {
        int at = text.indexOf(name);
        return new Extraction.Entity(name, type, "", List.of(), List.of(new Span(at, at + name.length())));
    }

    private static UnderstandingEvent understood(String passageId, String text, Extraction.Entity... entities) {
        PassageEvent.Upsert p = new PassageEvent.Upsert(
                NS,
                "doc",
                1,
                passageId,
                passageId.equals("p1") ? 0 : 1,
                "hash-" + passageId,
                "T",
                List.of(),
                text,
                0,
                text.length(),
                null,
                null);
        List<float[]> vectors = new ArrayList<>();
        for (int i = 0; i < entities.length; i++) {
            vectors.add(new float[] {1, i, passageId.length()});
        }
        Extraction x = new Extraction(
                text, List.of(entities), List.of(), List.of(), List.of(), "hand/1", null, Extraction.TokenUsage.NONE);
        Embeddings e = new Embeddings(new float[] {1, 0, 0}, new float[] {1, 0, 0}, vectors, List.of(), List.of());
        return new UnderstandingEvent.Understood(p, new Understanding(x, e, "test-embedder"));
    }

    private static UnderstandingEvent manifest() {
        return new UnderstandingEvent.Manifest(
                NS,
                "doc",
                1,
                DocumentEvent.Op.UPSERT,
                "T",
                null,
                Map.of(),
                null,
                List.of(
                        new UnderstandingEvent.PassageRef("p1", "hash-p1"),
                        new UnderstandingEvent.PassageRef("p2", "hash-p2")),
                new EventPosition("documents", 0, 7),
                List.of());
    }

    private static UnderstandingEvent first() {
        return understood(
                "p1",
                P1,
                mention(P1, "Ada Lovelace", EntityType.PERSON),
                mention(P1, "Charles Babbage", EntityType.PERSON),
                mention(P1, "London", EntityType.PLACE));
    }

    private static UnderstandingEvent second() {
        return understood(
                "p2",
                P2,
                mention(P2, "Babbage", EntityType.PERSON),
                mention(P2, "Lovelace", EntityType.PERSON),
                mention(P2, "Analytical Engine", EntityType.WORK));
    }

    /** Fails the first record it is given that {@code when} accepts, once, after its changes were made. */
    private static final class FailOnce implements ConstructProcessor.Fault {
        final Predicate<UnderstandingEvent> when;
        final AtomicInteger failures = new AtomicInteger();
        int changesMade;
        boolean sawStagedWrites;

        FailOnce(Predicate<UnderstandingEvent> when) {
            this.when = when;
        }

        @Override
        public void afterChanges(MemoryTransaction tx, UnderstandingEvent event) {
            if (when.test(event) && failures.getAndIncrement() == 0) {
                changesMade = tx.changes().size();
                sawStagedWrites =
                        tx.entities().get(Keys.of(NS, EntityNames.surfaceId(NS, "Analytical Engine", EntityType.WORK)))
                                != null;
                throw new IllegalStateException("injected");
            }
        }
    }

    private static boolean isSecond(UnderstandingEvent e) {
        return e instanceof UnderstandingEvent.Understood u
                && u.passage().passageId().equals("p2");
    }

    // ---- the tests -------------------------------------------------------------------------------------------------

    @Test
    void aRecordThatFailsPartWayLeavesNoTraceButItsDeadLetter() {
        FailOnce fault = new FailOnce(ConstructProcessorTest::isSecond);
        Memory memory = new Memory("failing", fault);
        memory.pipe(manifest());
        memory.pipe(first());
        Map<String, Map<String, String>> before = memory.stores();
        NamespaceState stateBefore = memory.namespace();
        int emittedBefore = memory.emitted.size();
        assertThat(memory.changes()).isNotEmpty();

        memory.pipe(second());

        assertThat(fault.changesMade)
                .as("the record failed after making changes")
                .isPositive();
        assertThat(fault.sawStagedWrites).as("and after writing").isTrue();
        assertThat(memory.stores())
                .as("every memory store, the namespace state included")
                .isEqualTo(before);
        assertThat(memory.namespace()).isEqualTo(stateBefore);
        List<Emission> emitted = memory.emitted.subList(emittedBefore, memory.emitted.size());
        assertThat(emitted).singleElement().isInstanceOf(Emission.Dead.class);
        DeadLetter letter = ((Emission.Dead) emitted.get(0)).letter();
        assertThat(letter.stage()).isEqualTo(DeadLetter.Stage.CONSTRUCT);
        assertThat(letter.cause()).isEqualTo(DeadLetter.Cause.ERROR);
        assertThat(letter.reason()).isEqualTo("memory update failed: java.lang.IllegalStateException: injected");
        assertThat(letter.topic()).isEqualTo(TOPIC);
        assertThat(letter.offset()).isEqualTo(2);
        assertThat(new String(Base64.getDecoder().decode(letter.keyBase64()), StandardCharsets.UTF_8))
                .isEqualTo(NS);
        assertThat(Json.fromBytes(Base64.getDecoder().decode(letter.valueBase64()), UnderstandingEvent.class))
                .isInstanceOf(UnderstandingEvent.Understood.class);
    }

    @Test
    void everyVectorIsRoundedToItsStoredPrecisionBeforeTheMemoryStepUsesIt() {
        // a direction whose locality-sensitive buckets change when it is rounded to half precision: a memory step
        // that hashed the understanding's float32 vector would index the surface under other blocking keys than the
        // vector it stores, and than the same passage would get when its vector is read back
        float[] vector = null;
        for (int step = 0; vector == null && step < 10_000_000; step++) {
            double angle = step * 1e-6;
            float[] v = {(float) Math.cos(angle), (float) Math.sin(angle)};
            if (!BlockingIndex.Lsh.buckets(v).equals(BlockingIndex.Lsh.buckets(StoredVectors.round(v)))) {
                vector = v;
            }
        }
        assertThat(vector).as("a direction on the edge of a bucket").isNotNull();
        float[] passage = {0.1f, 0.7f};
        Extraction.Entity ada = mention(P1, "Ada Lovelace", EntityType.PERSON);
        PassageEvent.Upsert p = new PassageEvent.Upsert(
                NS, "doc", 1, "p1", 0, "hash-p1", "T", List.of(), P1, 0, P1.length(), null, null);
        Extraction x = new Extraction(
                P1, List.of(ada), List.of(), List.of(), List.of(), "hand/1", null, Extraction.TokenUsage.NONE);
        Memory memory = new Memory("rounded", ConstructProcessor.Fault.NONE);
        memory.pipe(new UnderstandingEvent.Understood(
                p,
                new Understanding(
                        x, new Embeddings(passage, passage, List.of(vector), List.of(), List.of()), "test-embedder")));

        String surface = Keys.of(NS, EntityNames.surfaceId(NS, "Ada Lovelace", EntityType.PERSON));
        KeyValueStore<String, EntityRecord> entities =
                memory.driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
        assertThat(entities.get(surface).lsh()).isEqualTo(BlockingIndex.Lsh.buckets(StoredVectors.round(vector)));
        KeyValueStore<String, byte[]> entityVectors =
                memory.driver.getKeyValueStore(StateStores.MEMORY_ENTITY_VECTORS.name());
        assertThat(StoredVectors.decode(entityVectors.get(surface))).containsExactly(StoredVectors.round(vector));
        KeyValueStore<String, byte[]> passageVectors =
                memory.driver.getKeyValueStore(StateStores.MEMORY_VECTORS.name());
        assertThat(passageVectors.get(Keys.of(NS, "p1")))
                .as("half precision: a marker and two bytes a value")
                .hasSize(1 + 2 * passage.length);
        assertThat(StoredVectors.decode(passageVectors.get(Keys.of(NS, "p1"))))
                .containsExactly(StoredVectors.round(passage));
    }

    @Test
    void aPassageUnderstoodWithoutAMemoryVectorMirrorsNoMemoryPoint() {
        // without a Qdrant mirror the understanding leaves the memory vector empty: the passage's mirror record then
        // carries no memory vector, so the sink writes no point for it and the consistency check expects none
        Extraction.Entity ada = mention(P1, "Ada Lovelace", EntityType.PERSON);
        Extraction x = new Extraction(
                P1, List.of(ada), List.of(), List.of(), List.of(), "hand/1", null, Extraction.TokenUsage.NONE);
        float[] passage = {1, 0, 0};
        Memory memory = new Memory("memory-vectors", ConstructProcessor.Fault.NONE);
        for (String id : List.of("p1", "p2")) {
            float[] memoryVector = id.equals("p1") ? new float[0] : new float[] {0, 1, 0};
            memory.pipe(new UnderstandingEvent.Understood(
                    new PassageEvent.Upsert(
                            NS, "doc-" + id, 1, id, 0, "hash-" + id, "T", List.of(), P1, 0, P1.length(), null, null),
                    new Understanding(
                            x,
                            new Embeddings(passage, memoryVector, List.of(new float[] {0, 0, 1}), List.of(), List.of()),
                            "test-embedder")));
        }

        Map<String, Set<MirrorRecord.VectorKind>> kinds = new HashMap<>();
        memory.emitted.stream()
                .filter(e -> e instanceof Emission.Mirrored)
                .map(e -> ((Emission.Mirrored) e).record())
                .filter(r -> r.kind() == MirrorRecord.Kind.PASSAGE && !r.deleted())
                .forEach(r -> kinds.put(r.id(), r.vectors().keySet()));
        assertThat(kinds).containsOnlyKeys("p1", "p2");
        assertThat(kinds.get("p1")).containsExactly(MirrorRecord.VectorKind.PASSAGE);
        assertThat(kinds.get("p2"))
                .containsExactlyInAnyOrder(MirrorRecord.VectorKind.PASSAGE, MirrorRecord.VectorKind.MEMORY);
    }

    @Test
    void theRecordAfterAFailedOneGoesOnAsIfItHadNeverBeen() {
        Memory failing = new Memory("failing", new FailOnce(ConstructProcessorTest::isSecond));
        Memory clean = new Memory("clean", ConstructProcessor.Fault.NONE);
        for (Memory m : List.of(failing, clean)) {
            m.pipe(manifest());
            m.pipe(first());
        }
        failing.pipe(second()); // fails
        for (Memory m : List.of(failing, clean)) {
            m.pipe(second());
        }

        assertThat(failing.changes()).isEqualTo(clean.changes());
        assertThat(failing.changes())
                .extracting(MemoryChange::version)
                .as("versions continue without a gap")
                .containsExactlyElementsOf(
                        LongStream.rangeClosed(1, clean.changes().size())
                                .boxed()
                                .toList());
        Map<String, Map<String, String>> failingStores = failing.stores();
        Map<String, Map<String, String>> cleanStores = clean.stores();
        failingStores.remove(StateStores.MEMORY_NAMESPACES.name());
        cleanStores.remove(StateStores.MEMORY_NAMESPACES.name());
        assertThat(failingStores).isEqualTo(cleanStores);
        // Only the input position differs: the failed record was read too.
        assertThat(failing.namespace().at(0, 0, NOW))
                .isEqualTo(clean.namespace().at(0, 0, NOW));
        assertThat(failing.namespace().inputOffset()).isEqualTo(3);
        KeyValueStore<String, DocumentRecord> documents =
                failing.driver.getKeyValueStore(StateStores.MEMORY_DOCUMENTS.name());
        assertThat(documents.get(Keys.of(NS, "doc")).status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(failing.deadLetters()).hasSize(1);
    }

    @Test
    void aFailedOperatorCommandLeavesNoTrace() {
        FailOnce fault = new FailOnce(e -> e instanceof UnderstandingEvent.Command);
        Memory memory = new Memory("command", fault);
        memory.pipe(manifest());
        memory.pipe(first());
        memory.pipe(second());
        Map<String, Map<String, String>> before = memory.stores();
        int changes = memory.changes().size();
        String babbage = EntityNames.surfaceId(NS, "Babbage", EntityType.PERSON);
        String charles = EntityNames.surfaceId(NS, "Charles Babbage", EntityType.PERSON);
        UnderstandingEvent split = new UnderstandingEvent.Command(
                new MemoryCommand(NS, MemoryCommand.Op.SPLIT, babbage, charles, "", Instant.EPOCH), null, null);

        memory.pipe(split);

        assertThat(fault.failures).hasValue(1);
        assertThat(memory.stores()).isEqualTo(before);
        assertThat(memory.stores().get(StateStores.MEMORY_ENTITY_OVERRIDES.name()))
                .as("the operator's split was staged, never written")
                .isEmpty();
        assertThat(memory.changes()).hasSize(changes);
        assertThat(memory.deadLetters()).singleElement().satisfies(d -> assertThat(d.cause())
                .isEqualTo(DeadLetter.Cause.ERROR));

        memory.pipe(split); // sent again, it goes through
        assertThat(memory.stores().get(StateStores.MEMORY_ENTITY_OVERRIDES.name()))
                .hasSize(2);
    }

    @Test
    void aFailedRetractionOrCommandLeavesNoTraceEither() {
        FailOnce fault = new FailOnce(
                e -> !(e instanceof UnderstandingEvent.Understood) && !(e instanceof UnderstandingEvent.Manifest));
        Memory memory = new Memory("retraction", fault);
        memory.pipe(manifest());
        memory.pipe(first());
        memory.pipe(second());
        Map<String, Map<String, String>> before = memory.stores();
        int changes = memory.changes().size();

        memory.pipe(new UnderstandingEvent.Retracted(
                new PassageEvent.Retraction(NS, "doc", 2, "p1", PassageEvent.Reason.UPDATED)));
        assertThat(fault.changesMade).isPositive();
        assertThat(memory.stores()).isEqualTo(before);
        assertThat(memory.changes()).hasSize(changes);

        String babbage = EntityNames.surfaceId(NS, "Babbage", EntityType.PERSON);
        String charles = EntityNames.surfaceId(NS, "Charles Babbage", EntityType.PERSON);
        memory.pipe(new UnderstandingEvent.Command(
                new MemoryCommand(NS, MemoryCommand.Op.SPLIT, babbage, charles, "", Instant.EPOCH), null, null));
        assertThat(memory.stores()).as("a command that went through").isNotEqualTo(before);
        assertThat(memory.stores().get(StateStores.MEMORY_ENTITY_OVERRIDES.name()))
                .hasSize(2);
        assertThat(memory.deadLetters()).hasSize(1);
    }

    @Test
    void theAgentsClaimsBecomeReviewItemsWhereResolutionDoesNotBearThemOutAndLeaveWithThePassage() {
        Memory memory = new Memory("claims", ConstructProcessor.Fault.NONE);
        UnderstandingEvent.Understood plain = (UnderstandingEvent.Understood) understood(
                "p1",
                P1,
                mention(P1, "Ada Lovelace", EntityType.PERSON),
                mention(P1, "Charles Babbage", EntityType.PERSON),
                mention(P1, "London", EntityType.PLACE));
        Extraction.Construction construction = new Extraction.Construction(
                Extraction.Construction.AGENT,
                "",
                4,
                9,
                List.of(
                        // a merge the rules refuse (a person and a place): review
                        new Extraction.Claim(Extraction.Claim.SAME_AS, "Charles Babbage", "London", "same one"),
                        // one they bear out (the same name written differently): nothing to review
                        new Extraction.Claim(Extraction.Claim.SAME_AS, "Ada Lovelace", "ADA LOVELACE", ""),
                        // one naming what memory does not hold: review
                        new Extraction.Claim(Extraction.Claim.SAME_AS, "Ada Lovelace", "Lady Byron", "wife"),
                        new Extraction.Claim(Extraction.Claim.DELETE_ENTITY, "London (e-123)", "", "not a place"),
                        new Extraction.Claim(Extraction.Claim.REVIEW, "the Engine", "", "which machine?")));
        Understanding u = plain.understanding();
        memory.pipe(new UnderstandingEvent.Understood(
                plain.passage(),
                new Understanding(u.extraction().withConstruction(construction), u.embeddings(), u.embedder())));

        Map<String, String> reviews = memory.stores().get(StateStores.MEMORY_REVIEWS.name());
        assertThat(reviews.values())
                .hasSize(4)
                .anySatisfy(r -> assertThat(r)
                        .contains("\"kind\":\"agent_same_as\"", "Charles Babbage = London")
                        .contains("entity resolution keeps them apart; the agent's reason: same one"))
                .anySatisfy(r -> assertThat(r).contains("Ada Lovelace = Lady Byron", "memory holds no entity named"))
                .anySatisfy(r -> assertThat(r).contains("\"kind\":\"agent_delete_entity\"", "London (e-123)"))
                .anySatisfy(r -> assertThat(r).contains("\"kind\":\"agent_review\"", "which machine?"));
        // the merge the rules refused did not happen
        KeyValueStore<String, EntityRecord> entities =
                memory.driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
        String charles = EntityNames.surfaceId(NS, "Charles Babbage", EntityType.PERSON);
        String london = EntityNames.surfaceId(NS, "London", EntityType.PLACE);
        assertThat(entities.get(Keys.of(NS, charles)).canonical())
                .isNotEqualTo(entities.get(Keys.of(NS, london)).canonical());

        memory.pipe(new UnderstandingEvent.Retracted(
                new PassageEvent.Retraction(NS, "doc", 2, "p1", PassageEvent.Reason.DELETED)));
        assertThat(memory.stores().getOrDefault(StateStores.MEMORY_REVIEWS.name(), Map.of()))
                .isEmpty();
    }
}
