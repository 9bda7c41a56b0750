package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

import dev.engram.metrics.Meters;
import dev.engram.processors.ExtractionCacheScope;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.EventPosition;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import dev.engram.understanding.Understander;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
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

class EngramTopologyTest {

    private static final Topics TOPICS = new Topics("engram.");

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> documents;
    private TestOutputTopic<String, PassageEvent> passages;
    private TestOutputTopic<String, UnderstandingEvent> understandings;
    private TestOutputTopic<String, MemoryChange> changes;
    private TestOutputTopic<byte[], DeadLetter> deadLetters;

    private void start(Understander understander) {
        start(understander, ExtractionCacheScope.NAMESPACE);
    }

    private void start(Understander understander, ExtractionCacheScope cacheScope) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "engram-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        StreamErrors.configure(props, TOPICS, Meters.detached()); // as the service runs it
        driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40).withCacheScope(cacheScope),
                        understander,
                        Meters.detached()),
                props);
        documents = TestTopics.input(driver, TOPICS.documents());
        passages = TestTopics.output(driver, TOPICS.passages());
        understandings = TestTopics.output(driver, TOPICS.understandings());
        changes = TestTopics.output(driver, TOPICS.memoryChanges());
        deadLetters = TestTopics.output(driver, TOPICS.deadLetters());
    }

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
    }

    private void upsert(String ns, String id, String title, String text) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("namespace", ns);
        doc.put("id", id);
        doc.put("op", "upsert");
        doc.put("title", title);
        doc.put("text", text);
        documents.pipeInput(bytes(id), Json.toBytes(doc));
    }

    private void delete(String ns, String id) {
        documents.pipeInput(bytes(id), Json.toBytes(Map.of("namespace", ns, "id", id, "op", "delete")));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private <V> List<V> storeValues(String store, String prefix) {
        KeyValueStore<String, V> kv = driver.getKeyValueStore(store);
        List<V> out = new ArrayList<>();
        try (KeyValueIterator<String, V> it = kv.prefixScan(prefix, new StringSerializer())) {
            it.forEachRemaining(e -> out.add(e.value));
        }
        return out;
    }

    private List<StoredPassage> passagesOf(String ns, String docId) {
        return this.<StoredPassage>storeValues(StateStores.MEMORY_PASSAGES.name(), Keys.prefix(ns)).stream()
                .filter(p -> p.documentId().equals(docId))
                .toList();
    }

    private DocumentRecord document(String ns, String id) {
        KeyValueStore<String, DocumentRecord> kv = driver.getKeyValueStore(StateStores.MEMORY_DOCUMENTS.name());
        return kv.get(Keys.of(ns, id));
    }

    @Test
    void readsADocumentIntoPassagesUnderstandingsAndMemory() {
        start(Understanders.embedded());

        upsert(
                "wiki",
                "ada",
                "Ada Lovelace",
                "# Life\n\nAda Lovelace was born in London.\n\n# Work\n\nShe worked with Charles Babbage.");

        List<KeyValue<String, PassageEvent>> emitted = passages.readKeyValuesToList();
        assertThat(emitted).hasSize(2).allSatisfy(kv -> {
            assertThat(kv.value).isInstanceOf(PassageEvent.Upsert.class);
            assertThat(kv.key).isEqualTo(kv.value.passageId());
        });
        List<KeyValue<String, UnderstandingEvent>> understood = understandings.readKeyValuesToList();
        assertThat(understood).allSatisfy(kv -> assertThat(kv.key).isEqualTo("wiki"));
        assertThat(understood)
                .extracting(kv -> kv.value.getClass().getSimpleName())
                .containsExactlyInAnyOrder("Manifest", "Understood", "Understood");
        assertThat(passagesOf("wiki", "ada"))
                .extracting(StoredPassage::text)
                .containsExactlyInAnyOrder("Ada Lovelace was born in London.", "She worked with Charles Babbage.");
        assertThat(document("wiki", "ada").status()).isEqualTo(DocumentStatus.VERIFIED);
        KeyValueStore<String, EntityRecord> entities = driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
        assertThat(this.<EntityRecord>storeValues(StateStores.MEMORY_ENTITIES.name(), Keys.prefix("wiki")))
                .extracting(EntityRecord::name)
                .contains("Ada Lovelace", "London", "Charles Babbage");
        EntityRecord babbage =
                this.<EntityRecord>storeValues(StateStores.MEMORY_ENTITIES.name(), Keys.prefix("wiki")).stream()
                        .filter(e -> e.name().equals("Charles Babbage"))
                        .findFirst()
                        .orElseThrow();
        assertThat(babbage.id()).isEqualTo(EntityNames.surfaceId("wiki", "Charles Babbage", EntityType.PERSON));
        assertThat(entities.get(Keys.of("wiki", babbage.id())).canonical()).isEqualTo(babbage.id());
        assertThat(babbage.passages()).isEqualTo(1);
        assertThat(babbage.mentions()).isEqualTo(1);
        assertThat(deadLetters.isEmpty()).isTrue();
    }

    /** The surfaces of one name in a namespace, by their description. */
    private Map<String, EntityRecord> surfacesNamed(String ns, String normalized) {
        Map<String, EntityRecord> out = new TreeMap<>();
        for (EntityRecord e : this.<EntityRecord>storeValues(StateStores.MEMORY_ENTITIES.name(), Keys.prefix(ns))) {
            if (e.normalized().equals(normalized)) {
                out.put(e.description(), e);
            }
        }
        return out;
    }

    @Test
    void namesakesTheirDescriptionsTellApartStayTwoEntitiesAndABareMentionWaitsForEvidence() {
        start(Understanders.embedded());

        upsert(
                "wiki",
                "footballer",
                "T",
                "Richard Wright is an English footballer who played for Ipswich Town in the Premier League.");
        upsert("wiki", "author", "T", "Richard Wright was an American author who wrote Native Son.");
        upsert("wiki", "bare", "T", "Richard Wright wrote Black Boy in Chicago.");

        Map<String, EntityRecord> wrights = surfacesNamed("wiki", "richard wright");
        assertThat(wrights).containsOnlyKeys("", "English footballer", "American author");
        EntityRecord footballer = wrights.get("English footballer");
        EntityRecord author = wrights.get("American author");
        EntityRecord bare = wrights.get("");
        assertThat(List.of(footballer.canonical(), author.canonical(), bare.canonical()))
                .as("three referents as far as memory can tell")
                .doesNotHaveDuplicates();
        KeyValueStore<String, PairDecision> pairs = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PAIRS.name());
        PairDecision namesakes = pairs.get(Keys.of("wiki", footballer.id(), author.id()));
        assertThat(namesakes.decision()).isEqualTo(PairDecision.Kind.SPLIT);
        assertThat(namesakes.rule()).isEqualTo("namesake");
        assertThat(namesakes.evidence()).anySatisfy(e -> assertThat(e).contains("different qualifiers"));
        assertThat(pairs.get(Keys.of("wiki", bare.id(), author.id())).rule()).isEqualTo("ambiguous_name");
        assertThat(pairs.get(Keys.of("wiki", bare.id(), footballer.id())).decision())
                .isEqualTo(PairDecision.Kind.REVIEW);

        // With one described referent left, a bare mention without evidence still waits: it may be a namesake no
        // passage describes.
        delete("wiki", "author");
        wrights = surfacesNamed("wiki", "richard wright");
        assertThat(wrights).containsOnlyKeys("", "English footballer");
        assertThat(wrights.get("").canonical())
                .isNotEqualTo(wrights.get("English footballer").canonical());
        assertThat(pairs.get(Keys.of("wiki", wrights.get("").id(), footballer.id()))
                        .evidence())
                .anySatisfy(e -> assertThat(e).contains("not a namesake"));

        // A bare mention with evidence for a referent (the club and league it played in) joins that referent.
        delete("wiki", "bare");
        upsert("wiki", "keeper", "T", "Richard Wright kept goal for Ipswich Town in the Premier League.");
        wrights = surfacesNamed("wiki", "richard wright");
        assertThat(wrights.get("").canonical())
                .isEqualTo(wrights.get("English footballer").canonical());
        assertThat(pairs.get(Keys.of("wiki", wrights.get("").id(), footballer.id()))
                        .evidence())
                .anySatisfy(e -> assertThat(e).startsWith("both mentioned with"));
        assertThat(deadLetters.isEmpty()).isTrue();
    }

    @Test
    void aTurnOfAConversationKeepsItsSpeakerItsDatesAndTheirFactsInMemory() {
        start(Understanders.embedded());

        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("namespace", "chat");
        doc.put("id", "s1-m3");
        doc.put("op", "upsert");
        doc.put("text", "I went to the Pride Center yesterday and you should come next Saturday.");
        doc.put(
                "metadata",
                Map.of("speaker", "Caroline", "participants", List.of("Caroline", "Melanie"), "session", 1));
        doc.put("event_time", "2023-05-08T13:56:00Z");
        documents.pipeInput(bytes("s1-m3"), Json.toBytes(doc));

        StoredPassage turn = passagesOf("chat", "s1-m3").get(0);
        assertThat(turn.extraction().entities())
                .extracting(e -> e.name() + "/" + e.type().wireName())
                .contains("Caroline/person", "Melanie/person", "7 May 2023/date", "13 May 2023/date");
        assertThat(turn.extraction().facts())
                .extracting(f -> f.head() + " | " + f.relation() + " | " + f.tail())
                .contains("Caroline | went on | 7 May 2023");
        assertThat(turn.memory()).contains("Caroline went to the Pride Center yesterday (7 May 2023)");
        assertThat(turn.session()).isNotNull();
        assertThat(turn.eventTime()).isEqualTo(Instant.parse("2023-05-08T13:56:00Z"));
        assertThat(document("chat", "s1-m3").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(this.<EntityRecord>storeValues(StateStores.MEMORY_ENTITIES.name(), Keys.prefix("chat")))
                .extracting(EntityRecord::name)
                .contains("Caroline", "Melanie", "7 May 2023");
    }

    @Test
    void aDocumentWithNothingToReadIsVerifiedWithoutPassagesAndItsUpdateReadsOnesText() {
        start(Understanders.embedded());

        // an HTML page of scripts only, and a Markdown file of front matter only: no passage, and still in memory
        upsert("wiki", "empty.html", "", "<!DOCTYPE html><html><body><script>x()</script></body></html>");
        upsert("wiki", "meta.md", "", "---\ntitle: Meta\n---\n");

        assertThat(passagesOf("wiki", "empty.html")).isEmpty();
        assertThat(document("wiki", "empty.html").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(document("wiki", "meta.md").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(document("wiki", "meta.md").notes()).singleElement(STRING).startsWith("nothing to read");

        upsert("wiki", "empty.html", "", "<!DOCTYPE html><html><body><p>Ada Lovelace wrote Note G.</p></body></html>");
        assertThat(passagesOf("wiki", "empty.html"))
                .extracting(StoredPassage::text)
                .containsExactly("Ada Lovelace wrote Note G.");
        assertThat(document("wiki", "empty.html").status()).isEqualTo(DocumentStatus.VERIFIED);
    }

    @Test
    void aDocumentReadOtherwiseThanItAskedIsReadAsTextAndItsStatusSaysWhy() {
        start(Understanders.embedded());

        pipe(Map.of(
                "namespace",
                "chat",
                "id",
                "no-speaker",
                "op",
                "upsert",
                "text",
                "I saw Ada Lovelace yesterday.",
                "metadata",
                Map.of("participants", List.of("Caroline", "Melanie"), "session", 3)));
        pipe(Map.of(
                "namespace",
                "chat",
                "id",
                "no-time",
                "op",
                "upsert",
                "text",
                "I saw Ada Lovelace yesterday.",
                "metadata",
                Map.of("speaker", "Caroline", "participants", List.of("Caroline", "Melanie"))));
        pipe(Map.of(
                "namespace",
                "chat",
                "id",
                "yaml.md",
                "op",
                "upsert",
                "text",
                "---\ntitle: [unclosed\n---\nAda Lovelace wrote Note G."));
        pipe(Map.of("namespace", "chat", "id", "plain", "op", "upsert", "text", "Ada Lovelace wrote Note G."));

        assertThat(document("chat", "no-speaker").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(document("chat", "no-speaker").notes()).singleElement(STRING).contains("no speaker");
        assertThat(passagesOf("chat", "no-speaker")).singleElement().satisfies(p -> assertThat(p.session())
                .isNull());
        assertThat(document("chat", "no-time").notes()).singleElement(STRING).contains("without event_time");
        assertThat(document("chat", "yaml.md").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(document("chat", "yaml.md").notes()).singleElement(STRING).startsWith("front matter is not YAML");
        // read as Markdown: a rule, then "title: [unclosed" underlined as a heading
        assertThat(passagesOf("chat", "yaml.md"))
                .singleElement()
                .satisfies(p -> assertThat(p.headings()).containsExactly("", "title: [unclosed"))
                .satisfies(p -> assertThat(p.text()).isEqualTo("Ada Lovelace wrote Note G."));
        assertThat(document("chat", "plain").notes()).isEmpty();
        assertThat(deadLetters.readValuesToList()).isEmpty();
    }

    private void pipe(Map<String, Object> event) {
        documents.pipeInput(bytes((String) event.get("id")), Json.toBytes(event));
    }

    @Test
    void anUpdateReEmitsOnlyChangedPassagesAndRetractsVanishedOnes() {
        start(Understanders.embedded());
        upsert("wiki", "d", "T", "# A\n\nAlpha stays.\n\n# B\n\nBeta changes.\n\n# C\n\nGamma goes.");
        List<PassageEvent> first = passages.readValuesToList();
        changes.readValuesToList();

        upsert("wiki", "d", "T", "# A\n\nAlpha stays.\n\n# B\n\nBeta changed.\n\n# D\n\nDelta arrives.");

        List<PassageEvent> second = passages.readValuesToList();
        assertThat(second)
                .filteredOn(e -> e instanceof PassageEvent.Upsert)
                .extracting(e -> ((PassageEvent.Upsert) e).text())
                .containsExactlyInAnyOrder("Beta changed.", "Delta arrives.");
        List<String> firstIds = first.stream().map(PassageEvent::passageId).toList();
        assertThat(second)
                .filteredOn(e -> e instanceof PassageEvent.Retraction)
                .allSatisfy(
                        e -> assertThat(((PassageEvent.Retraction) e).reason()).isEqualTo(PassageEvent.Reason.UPDATED))
                .extracting(PassageEvent::passageId)
                .containsExactlyInAnyOrder(firstIds.get(1), firstIds.get(2));
        assertThat(passagesOf("wiki", "d"))
                .extracting(StoredPassage::text)
                .containsExactlyInAnyOrder("Alpha stays.", "Beta changed.", "Delta arrives.");
        DocumentRecord doc = document("wiki", "d");
        assertThat(doc.version()).isEqualTo(2);
        assertThat(doc.status()).isEqualTo(DocumentStatus.VERIFIED);
    }

    @Test
    void namesEveryOperatorStoreAndSinkSoUpgradesKeepState() {
        String description = EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 1024, 40),
                        Understanders.cachingCounting(new AtomicInteger()),
                        Meters.detached())
                .describe()
                .toString();

        assertThat(description)
                .doesNotContain("KSTREAM-")
                .doesNotContain("KTABLE-")
                .doesNotContain("-0000");
        assertThat(description)
                .contains(
                        "read",
                        "understand",
                        "construct",
                        StateStores.MEMORY_PASSAGES.name(),
                        StateStores.EXTRACTION_CACHE.name(),
                        "construct-changes-sink",
                        "read-dead-letters-sink");
    }

    @Test
    void theSameEventSentAgainChangesNothingAndANewSourceIsANewVersion() {
        start(Understanders.embedded());
        upsert("wiki", "d", "T", "Same text.");
        passages.readValuesToList();
        changes.readValuesToList();

        upsert("wiki", "d", "T", "Same text.");

        assertThat(passages.isEmpty()).isTrue();
        assertThat(changes.isEmpty()).as("no new version, no memory change").isTrue();
        assertThat(passagesOf("wiki", "d")).hasSize(1);
        assertThat(document("wiki", "d").version()).isEqualTo(1);
        // the version is still the one read from the first event, and says where that event is
        assertThat(document("wiki", "d").input())
                .isEqualTo(new EventPosition(TOPICS.documents().name(), 0, 0));

        Map<String, Object> moved = new LinkedHashMap<>();
        moved.put("namespace", "wiki");
        moved.put("id", "d");
        moved.put("op", "upsert");
        moved.put("title", "T");
        moved.put("text", "Same text.");
        moved.put("source", "https://example.org/d");
        documents.pipeInput(bytes("d"), Json.toBytes(moved));

        assertThat(passages.isEmpty()).as("the same passages").isTrue();
        assertThat(changes.readValuesToList())
                .as("a new version of the document")
                .isNotEmpty();
        assertThat(document("wiki", "d").version()).isEqualTo(2);
        assertThat(document("wiki", "d").source()).isEqualTo("https://example.org/d");
        assertThat(document("wiki", "d").input())
                .isEqualTo(new EventPosition(TOPICS.documents().name(), 0, 2));
    }

    /** The same event with its metadata's keys in another order, at any depth, is the same event: no new version. */
    @Test
    void theSameMetadataInAnotherKeyOrderIsNotANewVersion() {
        start(Understanders.embedded());
        documents.pipeInput(
                bytes("d"),
                ("{\"namespace\": \"wiki\", \"id\": \"d\", \"op\": \"upsert\", \"text\": \"Same text.\","
                                + " \"metadata\": {\"shelf\": 7, \"tags\": {\"b\": 2, \"a\": [1, {\"y\": 0, \"x\": 1}]}}}")
                        .getBytes(StandardCharsets.UTF_8));
        changes.readValuesToList();

        documents.pipeInput(
                bytes("d"),
                ("{\"metadata\": {\"tags\": {\"a\": [1, {\"x\": 1, \"y\": 0}], \"b\": 2}, \"shelf\": 7},"
                                + " \"op\": \"upsert\", \"text\": \"Same text.\", \"id\": \"d\", \"namespace\": \"wiki\"}")
                        .getBytes(StandardCharsets.UTF_8));

        assertThat(changes.isEmpty()).as("no new version, no memory change").isTrue();
        assertThat(document("wiki", "d").version()).isEqualTo(1);
    }

    @Test
    void aDeleteRetractsEveryPassageAndEntityOnlyThatDocumentSupported() {
        start(Understanders.embedded());
        upsert("wiki", "ada", "Ada", "# One\n\nAda Lovelace met Charles Babbage.\n\n# Two\n\nShe lived in London.");
        upsert("wiki", "other", "Other", "Charles Babbage designed engines.");
        passages.readValuesToList();
        changes.readValuesToList();

        delete("wiki", "ada");

        List<PassageEvent> retractions = passages.readValuesToList();
        assertThat(retractions).hasSize(2).allSatisfy(e -> assertThat(e).isInstanceOf(PassageEvent.Retraction.class));
        assertThat(passagesOf("wiki", "ada")).isEmpty();
        assertThat(passagesOf("wiki", "other")).hasSize(1);
        assertThat(document("wiki", "ada").status()).isEqualTo(DocumentStatus.ARCHIVED);
        List<EntityRecord> left = storeValues(StateStores.MEMORY_ENTITIES.name(), Keys.prefix("wiki"));
        assertThat(left)
                .extracting(EntityRecord::name)
                .contains("Charles Babbage")
                .doesNotContain("Ada Lovelace", "London");
        assertThat(left)
                .filteredOn(e -> e.name().equals("Charles Babbage"))
                .singleElement()
                .satisfies(e -> assertThat(e.passages()).isEqualTo(1));
        List<MemoryChange> removed = changes.readValuesToList();
        assertThat(removed)
                .filteredOn(c -> c instanceof MemoryChange.PassageRemoved)
                .hasSize(2);
        assertThat(removed)
                .filteredOn(c -> c instanceof MemoryChange.EntityRemoved)
                .extracting(c -> ((MemoryChange.EntityRemoved) c).name())
                .contains("Ada Lovelace", "London");
    }

    @Test
    void deletingAndReAddingADocumentRestoresTheSameMemory() {
        start(Understanders.embedded());
        String text = "# One\n\nAda Lovelace met Charles Babbage.\n\n# Two\n\nShe lived in London.";
        upsert("wiki", "ada", "Ada", text);
        List<String> before = passagesOf("wiki", "ada").stream()
                .map(StoredPassage::passageId)
                .sorted()
                .toList();

        delete("wiki", "ada");
        upsert("wiki", "ada", "Ada", text);

        assertThat(passagesOf("wiki", "ada").stream()
                        .map(StoredPassage::passageId)
                        .sorted()
                        .toList())
                .isEqualTo(before);
        assertThat(document("wiki", "ada").status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(document("wiki", "ada").version()).isEqualTo(3);
    }

    @Test
    void badInputGoesToTheDeadLetterTopicWithItsReasonAndBytesAndTheStreamGoesOn() {
        start(Understanders.embedded());
        byte[] malformed = bytes("{\"namespace\": \"wiki\", \"id\": ");

        documents.pipeInput(bytes("x"), malformed);
        documents.pipeInput(bytes("y"), bytes("{\"namespace\":\"wiki\",\"id\":\"y\",\"op\":\"upsert\"}"));
        upsert("wiki", "ok", "Fine", "This document is fine.");

        List<KeyValue<byte[], DeadLetter>> letters = deadLetters.readKeyValuesToList();
        assertThat(letters).hasSize(2);
        DeadLetter first = letters.get(0).value;
        assertThat(first.stage()).isEqualTo(DeadLetter.Stage.READ);
        assertThat(first.reason()).startsWith("malformed JSON");
        assertThat(first.cause()).isEqualTo(DeadLetter.Cause.MALFORMED_JSON);
        assertThat(first.topic()).isEqualTo(TOPICS.documents().name());
        assertThat(first.offset()).isZero();
        assertThat(Base64.getDecoder().decode(first.valueBase64())).isEqualTo(malformed);
        assertThat(letters.get(0).key).isEqualTo(bytes("x"));
        assertThat(letters.get(1).value.reason()).startsWith("schema").contains("text");
        assertThat(letters.get(1).value.cause()).isEqualTo(DeadLetter.Cause.SCHEMA);
        assertThat(letters.get(1).value.offset()).isEqualTo(1);
        assertThat(passagesOf("wiki", "ok")).hasSize(1);
    }

    /**
     * Records no step writes — a null value, bytes that are no event — on the topics between the steps are dead-lettered
     * as undecodable with their reason, and the steps go on.
     */
    @Test
    void nullsAndGarbageBetweenTheStepsAreDeadLetteredAsUndecodable() {
        start(Understanders.embedded());
        for (String topic :
                List.of(TOPICS.passages().name(), TOPICS.understandings().name())) {
            TestInputTopic<byte[], byte[]> raw =
                    driver.createInputTopic(topic, new ByteArraySerializer(), new ByteArraySerializer());
            raw.pipeInput(bytes("wiki"), (byte[]) null);
            raw.pipeInput(bytes("wiki"), bytes("{\"x\": NaN}"));
        }
        upsert("wiki", "ok", "Fine", "This document is fine.");

        List<DeadLetter> letters = deadLetters.readValuesToList();
        assertThat(letters).hasSize(4).allSatisfy(l -> {
            assertThat(l.cause()).isEqualTo(DeadLetter.Cause.UNDECODABLE);
            assertThat(l.reason()).doesNotContain("Exception", "`");
        });
        assertThat(letters.get(0).reason()).startsWith("null value");
        assertThat(letters.get(0).stage()).isEqualTo(DeadLetter.Stage.UNDERSTAND);
        assertThat(letters.get(1).reason()).startsWith("cannot read the record").contains("Non-standard token 'NaN'");
        assertThat(letters.get(2).reason()).startsWith("null value");
        assertThat(letters.get(2).stage()).isEqualTo(DeadLetter.Stage.CONSTRUCT);
        assertThat(document("wiki", "ok").status()).isEqualTo(DocumentStatus.VERIFIED);
    }

    @Test
    void aPassageTheExtractorCannotUnderstandIsDeadLetteredAndTheDocumentStaysReading() {
        start(Understanders.failingOn("POISON"));

        upsert("wiki", "d", "T", "# Good\n\nA good passage.\n\n# Bad\n\nA POISON passage.");

        List<DeadLetter> letters = deadLetters.readValuesToList();
        assertThat(letters).singleElement().satisfies(l -> {
            assertThat(l.stage()).isEqualTo(DeadLetter.Stage.UNDERSTAND);
            assertThat(l.reason()).contains("extractor failed");
            assertThat(l.cause()).isEqualTo(DeadLetter.Cause.EXTRACTOR_ERROR);
            assertThat(l.topic()).isEqualTo(TOPICS.passages().name());
            assertThat(new String(Base64.getDecoder().decode(l.valueBase64()), StandardCharsets.UTF_8))
                    .contains("POISON");
        });
        assertThat(passagesOf("wiki", "d")).extracting(StoredPassage::text).containsExactly("A good passage.");
        assertThat(document("wiki", "d").status()).isEqualTo(DocumentStatus.READING);
    }

    @Test
    void theExtractionCacheSparesTheExtractorOnReplaysAndRepeatedContentWithinANamespace() {
        AtomicInteger calls = new AtomicInteger();
        start(Understanders.cachingCounting(calls));
        String text = "# One\n\nAda Lovelace met Charles Babbage.\n\n# Two\n\nShe lived in London.";

        upsert("wiki", "ada", "Ada", text);
        assertThat(calls).hasValue(2);
        delete("wiki", "ada");
        upsert("wiki", "ada", "Ada", text);
        upsert("wiki", "copy", "Ada", text);
        assertThat(calls)
                .as("a replay and a copy in the same namespace are not extracted again")
                .hasValue(2);

        upsert("other", "ada", "Ada", text);
        assertThat(calls)
                .as("another namespace pays for its own extraction: a cache hit would tell it what a tenant holds")
                .hasValue(4);
        assertThat(passagesOf("wiki", "copy")).hasSize(2);
        assertThat(passagesOf("other", "ada")).hasSize(2);
        KeyValueStore<String, Extraction> cache = driver.getKeyValueStore(StateStores.EXTRACTION_CACHE.name());
        assertThat(cache.approximateNumEntries()).isEqualTo(4);
    }

    /** Bytes on the extraction cache's topic that are no extraction are never taken for one: counted and skipped. */
    @Test
    void garbageOnTheExtractionCacheTopicIsNeverTakenForAnExtraction() {
        AtomicInteger calls = new AtomicInteger();
        start(Understanders.cachingCounting(calls), ExtractionCacheScope.GLOBAL);
        TestInputTopic<byte[], byte[]> raw = driver.createInputTopic(
                TOPICS.extractions().name(), new ByteArraySerializer(), new ByteArraySerializer());
        raw.pipeInput(bytes("k"), bytes("\"garbage\""));
        raw.pipeInput(bytes("k2"), bytes("{\"x\": 1}"));
        upsert("wiki", "ada", "Ada", "Ada Lovelace met Charles Babbage.");
        assertThat(calls).hasValue(1);
        KeyValueStore<String, Extraction> cache = driver.getKeyValueStore(StateStores.EXTRACTION_CACHE.name());
        assertThat(cache.get("k")).isNull();
        assertThat(cache.get("k2")).isNull();
    }

    @Test
    void aGlobalExtractionCacheIsSharedAcrossNamespaces() {
        AtomicInteger calls = new AtomicInteger();
        start(Understanders.cachingCounting(calls), ExtractionCacheScope.GLOBAL);
        String text = "# One\n\nAda Lovelace met Charles Babbage.\n\n# Two\n\nShe lived in London.";

        upsert("wiki", "ada", "Ada", text);
        upsert("other", "ada", "Ada", text);

        assertThat(calls)
                .as("the same content is extracted once, whatever the namespace")
                .hasValue(2);
        assertThat(passagesOf("other", "ada")).hasSize(2);
        KeyValueStore<String, Extraction> cache = driver.getKeyValueStore(StateStores.EXTRACTION_CACHE.name());
        assertThat(cache.approximateNumEntries()).isEqualTo(2);
    }

    @Test
    void namespacesAreIsolatedAndChangesAreVersionedPerNamespace() {
        start(Understanders.embedded());

        upsert("a", "d", "T", "Ada Lovelace in London.");
        upsert("b", "d", "T", "Ada Lovelace in Paris.");
        upsert("a", "e", "T", "Charles Babbage in London.");

        Map<String, List<Long>> versions = new LinkedHashMap<>();
        for (KeyValue<String, MemoryChange> kv : changes.readKeyValuesToList()) {
            assertThat(kv.key).isEqualTo(kv.value.namespace());
            versions.computeIfAbsent(kv.key, k -> new ArrayList<>()).add(kv.value.version());
        }
        assertThat(versions.keySet()).containsExactlyInAnyOrder("a", "b");
        versions.values()
                .forEach(v ->
                        assertThat(v).isSorted().doesNotHaveDuplicates().first().isEqualTo(1L));
        assertThat(passagesOf("a", "d")).singleElement().satisfies(p -> assertThat(p.text())
                .contains("London"));
        assertThat(passagesOf("b", "d")).singleElement().satisfies(p -> assertThat(p.text())
                .contains("Paris"));
    }
}
