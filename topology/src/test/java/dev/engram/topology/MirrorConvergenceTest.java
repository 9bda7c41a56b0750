package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.MirrorIds;
import dev.engram.stores.StateStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The mirror topic as a mirror would apply it (version-guarded upserts and deletes) ends holding exactly the objects
 * memory holds, at the versions memory records — after any history of upserts, updates and deletes — and the mirrors'
 * reports (compensated, repaired, drifted) change the sync state and re-emit what they must.
 */
class MirrorConvergenceTest {

    private static final Topics TOPICS = new Topics("engram.");
    private static final List<String> TEXTS = RetractionPropertyTest.TEXTS;

    @TempDir
    Path dir;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> documents;
    private TestInputTopic<String, byte[]> compensations;
    private TestOutputTopic<String, MirrorRecord> mirror;
    /** What a version-guarded mirror holds: kind/id → the last record applied. */
    private final Map<String, MirrorRecord> model = new TreeMap<>();

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
    }

    private void start(Path state) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "mirror-convergence");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, state.toString());
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40), Understanders.embedded(), Meters.detached()),
                props);
        documents = TestTopics.input(driver, TOPICS.documents());
        compensations = driver.createInputTopic(
                TOPICS.compensations().name(), new StringSerializer(), new ByteArraySerializer());
        mirror = driver.createOutputTopic(
                TOPICS.mirror().name(),
                TOPICS.mirror().keySerde().deserializer(),
                TOPICS.mirror().valueSerde().deserializer());
    }

    private void send(String ns, String id, String text) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("namespace", ns);
        doc.put("id", id);
        doc.put("op", text == null ? "delete" : "upsert");
        if (text != null) {
            doc.put("title", "T'}) DETACH DELETE n //");
            doc.put("text", text);
        }
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), Json.toBytes(doc));
    }

    /** Applies the mirror topic's new records as Neo4j and Qdrant do: never a lower version over a higher one. */
    private List<MirrorRecord> drain() {
        List<MirrorRecord> out = new ArrayList<>();
        for (KeyValue<String, MirrorRecord> kv : mirror.readKeyValuesToList()) {
            MirrorRecord r = kv.value;
            assertThat(kv.key).isEqualTo(r.namespace());
            out.add(r);
            String key = r.namespace() + "/" + r.kind().wireName() + "/" + r.id();
            MirrorRecord held = model.get(key);
            if (held != null && held.version() > r.version()) {
                continue;
            }
            if (r.deleted()) {
                model.remove(key);
            } else {
                model.put(key, r);
            }
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void aVersionGuardedMirrorOfTheTopicHoldsExactlyWhatMemoryHolds(long seed) {
        start(dir.resolve("s" + seed));
        Random random = new Random(seed);
        for (int step = 0; step < 30; step++) {
            String ns = random.nextInt(4) == 0 ? "other" : "wiki";
            String id = "doc-" + random.nextInt(4);
            send(ns, id, random.nextInt(3) == 0 ? null : TEXTS.get(random.nextInt(TEXTS.size())));
            drain();
        }
        {
            assertThat(mirrored()).isEqualTo(entries());
            // every object memory holds is in the entries, by its own store
            assertThat(ids(Kind.PASSAGE)).isEqualTo(keys(StateStores.MEMORY_PASSAGES.name()));
            assertThat(ids(Kind.ENTITY)).isEqualTo(keys(StateStores.MEMORY_ENTITIES.name()));
            TreeSet<String> mentions = new TreeSet<>();
            KeyValueStore<String, MentionRecord> links =
                    driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PASSAGES.name());
            for (KeyValue<String, MentionRecord> kv : all(links)) {
                String[] parts = kv.key.split(String.valueOf(Keys.SEPARATOR));
                mentions.add(parts[0] + "/" + MirrorIds.mentionId(parts[2], parts[1]));
            }
            assertThat(ids(Kind.MENTION)).isEqualTo(mentions);
        }
    }

    @Test
    void deletingEveryDocumentLeavesOnlyArchivedDocumentsInTheMirror() {
        start(dir.resolve("delete-all"));
        for (int i = 0; i < TEXTS.size(); i++) {
            send("wiki", "doc-" + i, TEXTS.get(i));
        }
        drain();
        assertThat(ids(Kind.FACT)).isNotEmpty();
        assertThat(ids(Kind.QUESTION)).isNotEmpty();
        assertThat(ids(Kind.MENTION)).isNotEmpty();
        for (int i = 0; i < TEXTS.size(); i++) {
            send("wiki", "doc-" + i, null);
        }
        drain();
        {
            assertThat(model.values()).isNotEmpty().allSatisfy(r -> {
                assertThat(r.kind()).isEqualTo(Kind.DOCUMENT);
                assertThat(((MirrorRecord.Document) r.object()).status().name()).isEqualTo("ARCHIVED");
            });
            assertThat(mirrored()).isEqualTo(entries());
        }
    }

    @Test
    void aPassageCarriesItsTextMemoryAndVectorsAndAFactItsEndpoints() {
        start(dir.resolve("content"));
        send("wiki", "doc-0", TEXTS.get(1));
        List<MirrorRecord> records = drain();
        {
            MirrorRecord.Passage p = records.stream()
                    .filter(r -> r.object() instanceof MirrorRecord.Passage)
                    .map(r -> (MirrorRecord.Passage) r.object())
                    .findFirst()
                    .orElseThrow();
            assertThat(p.text()).contains("Analytical Engine");
            assertThat(p.memory()).isNotBlank();
            assertThat(p.vector()).hasSize(384);
            assertThat(p.memoryVector()).hasSize(384);
            MirrorRecord.Document d = records.stream()
                    .filter(r -> r.object() instanceof MirrorRecord.Document)
                    .map(r -> (MirrorRecord.Document) r.object())
                    .reduce((a, b) -> b)
                    .orElseThrow();
            assertThat(d.title()).isEqualTo("T'}) DETACH DELETE n //");
            KeyValueStore<String, EntityRecord> entities = driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
            for (MirrorRecord r : records) {
                if (r.object() instanceof MirrorRecord.Fact f) {
                    assertThat(entities.get(Keys.of("wiki", f.headId()))).isNotNull();
                    assertThat(entities.get(Keys.of("wiki", f.tailId()))).isNotNull();
                    assertThat(f.vector()).hasSize(384);
                }
            }
            // nodes come before the relationships that join them
            int lastNode = -1;
            int firstRelationship = Integer.MAX_VALUE;
            for (int i = 0; i < records.size(); i++) {
                Kind k = records.get(i).kind();
                if (k == Kind.MENTION || k == Kind.FACT) {
                    firstRelationship = Math.min(firstRelationship, i);
                } else if (k == Kind.PASSAGE || k == Kind.ENTITY) {
                    lastNode = Math.max(lastNode, i);
                }
            }
            assertThat(lastNode).isLessThan(firstRelationship);
        }
    }

    @Test
    void reportsOfTheMirrorsChangeSyncStateAndReEmitWhatDrifted() {
        start(dir.resolve("feedback"));
        send("wiki", "doc-0", TEXTS.get(1));
        List<MirrorRecord> records = drain();
        MirrorRecord passage = records.stream()
                .filter(r -> r.kind() == Kind.PASSAGE)
                .findFirst()
                .orElseThrow();
        {
            KeyValueStore<String, MirrorEntry> entries = driver.getKeyValueStore(StateStores.MEMORY_MIRROR.name());
            KeyValueStore<String, MirrorEntry> compensated =
                    driver.getKeyValueStore(StateStores.MEMORY_MIRROR_COMPENSATED.name());
            String key = MirrorIds.key("wiki", Kind.PASSAGE, passage.id());

            report(passage, Compensation.Outcome.COMPENSATED, passage.version());
            assertThat(entries.get(key).compensated()).isTrue();
            assertThat(entries.get(key).reason()).isEqualTo("wrong dimension");
            assertThat(compensated.get(key)).isNotNull();
            assertThat(drain()).isEmpty();

            // a report about another version than memory's is old news
            report(passage, Compensation.Outcome.REPAIRED, passage.version() - 1);
            assertThat(compensated.get(key)).isNotNull();
            report(passage, Compensation.Outcome.REPAIRED, passage.version());
            assertThat(compensated.get(key)).isNull();
            assertThat(entries.get(key).compensated()).isFalse();

            // a drift: memory re-emits the object as it holds it, marked as a repair
            report(passage, Compensation.Outcome.DRIFTED, 0);
            List<MirrorRecord> repaired = drain();
            assertThat(repaired).singleElement().satisfies(r -> {
                assertThat(r.repair()).isTrue();
                assertThat(r.version()).isEqualTo(passage.version());
                assertThat(((MirrorRecord.Passage) r.object()).text())
                        .isEqualTo(((MirrorRecord.Passage) passage.object()).text());
            });

            // an orphan: memory holds no such object, so the mirrors delete their copy at the version they hold
            MirrorRecord orphan =
                    MirrorRecord.upsert("wiki", "0123456789abcdef0123456789abcdef", 7, Instant.EPOCH, passage.object());
            report(orphan, Compensation.Outcome.DRIFTED, 7);
            assertThat(drain()).singleElement().satisfies(r -> {
                assertThat(r.deleted()).isTrue();
                assertThat(r.version()).isEqualTo(7);
                assertThat(r.id()).isEqualTo(orphan.id());
            });
        }
    }

    @Test
    void aRecordOnTheCompensationsTopicThatIsNoCompensationIsDeadLettered() {
        start(dir.resolve("garbage"));
        compensations.pipeInput("wiki", "{\"namespace\":\"wiki\"}".getBytes(StandardCharsets.UTF_8));
        compensations.pipeInput("wiki", (byte[]) null);
        send("wiki", "doc-0", TEXTS.get(1));
        {
            List<DeadLetter> letters = driver.createOutputTopic(
                            TOPICS.deadLetters().name(),
                            TOPICS.deadLetters().keySerde().deserializer(),
                            TOPICS.deadLetters().valueSerde().deserializer())
                    .readValuesToList();
            assertThat(letters).hasSize(2).allSatisfy(l -> assertThat(l.cause())
                    .isEqualTo(DeadLetter.Cause.BAD_COMPENSATION));
            assertThat(drain()).isNotEmpty();
        }
    }

    /**
     * A report keyed by another namespace than the one it names would reach the memory of that namespace on another
     * partition: it is dead-lettered as a key mismatch and changes nothing.
     */
    @Test
    void aReportKeyedByAnotherNamespaceThanItNamesIsDeadLettered() {
        start(dir.resolve("key-mismatch"));
        send("wiki", "doc-0", TEXTS.get(1));
        MirrorRecord passage = drain().stream()
                .filter(r -> r.kind() == Kind.PASSAGE)
                .findFirst()
                .orElseThrow();
        Compensation c = new Compensation(
                "wiki",
                passage.version(),
                Compensation.Sink.QDRANT,
                Kind.PASSAGE,
                "upsert",
                passage.id(),
                Compensation.Outcome.COMPENSATED,
                "wrong dimension",
                1,
                Instant.EPOCH);
        compensations.pipeInput("other", Json.toBytes(c));
        List<DeadLetter> letters = driver.createOutputTopic(
                        TOPICS.deadLetters().name(),
                        TOPICS.deadLetters().keySerde().deserializer(),
                        TOPICS.deadLetters().valueSerde().deserializer())
                .readValuesToList();
        assertThat(letters).singleElement().satisfies(l -> {
            assertThat(l.cause()).isEqualTo(DeadLetter.Cause.KEY_MISMATCH);
            assertThat(l.stage()).isEqualTo(DeadLetter.Stage.CONSTRUCT);
            assertThat(l.reason()).contains("'other'", "'wiki'");
        });
        KeyValueStore<String, MirrorEntry> compensated =
                driver.getKeyValueStore(StateStores.MEMORY_MIRROR_COMPENSATED.name());
        assertThat(compensated.get(MirrorIds.key("wiki", Kind.PASSAGE, passage.id())))
                .isNull();
    }

    /**
     * A delete a mirror refused leaves the object there, though memory no longer holds it: the repair loop sends the
     * delete again, at the version refused, until the mirror reports it repaired.
     */
    @Test
    void aDeleteAMirrorRefusedIsSentAgainUntilItIsRepaired() {
        start(dir.resolve("refused-delete"));
        send("wiki", "doc-0", TEXTS.get(1));
        drain();
        send("wiki", "doc-0", null);
        MirrorRecord deleted = drain().stream()
                .filter(r -> r.kind() == Kind.PASSAGE && r.deleted())
                .findFirst()
                .orElseThrow();
        KeyValueStore<String, MirrorEntry> compensated =
                driver.getKeyValueStore(StateStores.MEMORY_MIRROR_COMPENSATED.name());
        String key = MirrorIds.key("wiki", Kind.PASSAGE, deleted.id());
        compensations.pipeInput("wiki", Json.toBytes(feedback(deleted, "delete", Compensation.Outcome.COMPENSATED)));
        assertThat(compensated.get(key)).isNotNull();

        driver.advanceWallClockTime(Duration.ofMinutes(2));
        assertThat(drain())
                .filteredOn(r -> r.id().equals(deleted.id()))
                .singleElement()
                .satisfies(r -> {
                    assertThat(r.deleted()).isTrue();
                    assertThat(r.repair()).isTrue();
                    assertThat(r.version()).isEqualTo(deleted.version());
                });
        compensations.pipeInput("wiki", Json.toBytes(feedback(deleted, "delete", Compensation.Outcome.REPAIRED)));
        assertThat(compensated.get(key)).isNull();
        driver.advanceWallClockTime(Duration.ofMinutes(10));
        assertThat(drain()).noneMatch(r -> r.id().equals(deleted.id()));
    }

    private static Compensation feedback(MirrorRecord r, String operation, Compensation.Outcome outcome) {
        return new Compensation(
                r.namespace(),
                r.version(),
                Compensation.Sink.NEO4J,
                r.kind(),
                operation,
                r.id(),
                outcome,
                "refused",
                1,
                Instant.EPOCH);
    }

    private void report(MirrorRecord r, Compensation.Outcome outcome, long version) {
        Compensation c = new Compensation(
                r.namespace(),
                version,
                Compensation.Sink.QDRANT,
                r.kind(),
                "upsert",
                r.id(),
                outcome,
                "wrong dimension",
                1,
                Instant.EPOCH);
        compensations.pipeInput(r.namespace(), Json.toBytes(c));
    }

    /** namespace/kind/id → version, as the model mirror holds it. */
    private Map<String, Long> mirrored() {
        Map<String, Long> out = new TreeMap<>();
        model.values().forEach(r -> out.put(r.namespace() + "/" + r.kind().wireName() + "/" + r.id(), r.version()));
        return out;
    }

    /** namespace/kind/id → version, as memory records it. */
    private Map<String, Long> entries() {
        Map<String, Long> out = new TreeMap<>();
        KeyValueStore<String, MirrorEntry> store = driver.getKeyValueStore(StateStores.MEMORY_MIRROR.name());
        for (KeyValue<String, MirrorEntry> kv : all(store)) {
            String[] parts = kv.key.split(String.valueOf(Keys.SEPARATOR), 3);
            out.put(parts[0] + "/" + parts[1] + "/" + parts[2], kv.value.version());
        }
        return out;
    }

    private TreeSet<String> ids(Kind kind) {
        TreeSet<String> out = new TreeSet<>();
        model.values().stream().filter(r -> r.kind() == kind).forEach(r -> out.add(r.namespace() + "/" + r.id()));
        return out;
    }

    private TreeSet<String> keys(String store) {
        TreeSet<String> out = new TreeSet<>();
        KeyValueStore<String, Object> s = driver.getKeyValueStore(store);
        for (KeyValue<String, Object> kv : all(s)) {
            out.add(kv.key.replace(Keys.SEPARATOR, '/'));
        }
        return out;
    }

    private static <V> List<KeyValue<String, V>> all(KeyValueStore<String, V> store) {
        List<KeyValue<String, V>> out = new ArrayList<>();
        try (KeyValueIterator<String, V> it = store.all()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }
}
