package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.query.EntityViews;
import dev.engram.query.Responses;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MemoryCommand;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StateStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Entity resolution through the whole topology with the embedded understanding: what merges, what is only shown for
 * review or deferred, and that a merge is undone exactly when the evidence for it leaves memory.
 */
class EntityResolutionTest {

    private static final Topics TOPICS = new Topics("engram.");

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> documents;
    private TestOutputTopic<String, MemoryChange> changes;

    @BeforeEach
    void start() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "resolution-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40), Understanders.embedded(), Meters.detached()),
                props);
        documents = TestTopics.input(driver, TOPICS.documents());
        changes = TestTopics.output(driver, TOPICS.memoryChanges());
    }

    @AfterEach
    void close() {
        driver.close();
    }

    @Test
    void anAcronymMergesWithItsOnlyExpansionAndSplitsWhenTheExpansionLeaves() {
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        upsert("sailors", "USN sailors visited London.");

        EntityRecord usn = surface("usn");
        EntityRecord navy = surface("united states navy");
        assertThat(usn.canonical()).isEqualTo(navy.canonical());
        assertThat(pair(usn, navy).decision()).isEqualTo(PairDecision.Kind.MERGE);
        assertThat(pair(usn, navy).rule()).isEqualTo("acronym");
        assertThat(decisions(MemoryChange.EntityDecision.Kind.MERGE))
                .isNotEmpty()
                .allSatisfy(d -> assertThat(d.rule()).isEqualTo("acronym"));
        assertThat(namespace().entities()).isEqualTo(namespace().surfaces() - 1);

        delete("navy");

        usn = surface("usn");
        assertThat(usn.canonical()).isEqualTo(usn.id());
        assertThat(pairs(usn)).isEmpty();
        assertThat(namespace().entities()).isEqualTo(namespace().surfaces());
    }

    @Test
    void aSurnameMergesOnlyWithSharedContextAndOnlyWhenUnambiguous() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        // Only a shared place: places are mentioned with everything, so the merge waits for better evidence.
        upsert("engine", "Babbage built the Difference Engine in London.");
        EntityRecord babbage = surface("babbage");
        EntityRecord charles = surface("charles babbage");
        assertThat(pair(babbage, charles).decision()).isEqualTo(PairDecision.Kind.DEFER);
        assertThat(babbage.canonical()).isEqualTo(babbage.id());

        upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
        assertThat(pair(surface("babbage"), charles).decision()).isEqualTo(PairDecision.Kind.MERGE);
        assertThat(pair(surface("babbage"), charles).evidence())
                .anySatisfy(e -> assertThat(e).contains("Ada Lovelace"));
        assertThat(surface("babbage").canonical())
                .isEqualTo(surface("charles babbage").canonical());

        // A second Babbage makes the bare surname ambiguous: the merge is undone and the pairs go to review.
        upsert("son", "Benjamin Babbage explored Australia from London.");
        assertThat(surface("babbage").canonical()).isEqualTo(surface("babbage").id());
        assertThat(pair(surface("babbage"), charles).decision()).isEqualTo(PairDecision.Kind.REVIEW);
        assertThat(pair(surface("babbage"), charles).rule()).isEqualTo("ambiguous");
        assertThat(decisions(MemoryChange.EntityDecision.Kind.UNMERGE)).isNotEmpty();
    }

    @Test
    void peopleWithAlikeNamesNeedSupportingEvidence() {
        upsert("turing", "Alan Turing studied mathematics.");
        upsert("turring", "Alan Turring played chess.");
        EntityRecord turing = surface("alan turing");
        EntityRecord turring = surface("alan turring");
        assertThat(pair(turing, turring).decision()).isEqualTo(PairDecision.Kind.REVIEW);
        assertThat(pair(turing, turring).rule()).isEqualTo("similar_name");
        assertThat(turring.canonical()).isNotEqualTo(turing.canonical());

        // the merge score asks more of names alike than of one name: three people both were with
        upsert("turring", "Alan Turring played chess with Hugh Alexander, Gordon Welchman and Dilly Knox.");
        upsert(
                "turing",
                "Alan Turing studied mathematics. He worked with Hugh Alexander, Gordon Welchman and Dilly Knox.");
        assertThat(pair(surface("alan turing"), surface("alan turring")).decision())
                .isEqualTo(PairDecision.Kind.MERGE);
        assertThat(surface("alan turring").canonical())
                .isEqualTo(surface("alan turing").canonical());
    }

    @Test
    void namesThatDifferByANumberNeverMerge() {
        upsert("one", "World War I began in 1914 in Europe.");
        upsert("two", "World War II began in 1939 in Europe.");
        assertThat(pairs(surface("world war i"))).isEmpty();
        assertThat(surface("world war i").canonical())
                .isNotEqualTo(surface("world war ii").canonical());
    }

    @Test
    void anOperatorSplitUndoesAMergeUntilCleared() {
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        upsert("sailors", "USN sailors visited London.");
        EntityRecord usn = surface("usn");
        EntityRecord navy = surface("united states navy");
        assertThat(usn.canonical()).isEqualTo(navy.canonical());

        command("split", usn.id(), navy.id(), "a different USN");
        assertThat(surface("usn").canonical())
                .isNotEqualTo(surface("united states navy").canonical());
        assertThat(pair(usn, navy).decision()).isEqualTo(PairDecision.Kind.SPLIT);
        assertThat(pair(usn, navy).rule()).isEqualTo("operator");
        assertThat(pair(usn, navy).evidence()).containsExactly("operator: a different USN");

        // The operator's decision outlives the surfaces: delete and re-add, still apart.
        delete("sailors");
        upsert("sailors", "USN sailors visited London.");
        assertThat(surface("usn").canonical())
                .isNotEqualTo(surface("united states navy").canonical());

        command("clear", usn.id(), navy.id(), "");
        assertThat(surface("usn").canonical())
                .isEqualTo(surface("united states navy").canonical());
        assertThat(pair(usn, navy).rule()).isEqualTo("acronym");
    }

    @Test
    void anOperatorMergeGroupsWhatNoRuleWould() {
        upsert("a", "Samuel Clemens grew up in Hannibal.");
        upsert("b", "Mark Twain wrote a novel about the Mississippi River.");
        EntityRecord clemens = surface("samuel clemens");
        EntityRecord twain = surface("mark twain");
        assertThat(clemens.canonical()).isNotEqualTo(twain.canonical());

        command("merge", clemens.id(), twain.id(), "pen name");
        assertThat(surface("samuel clemens").canonical())
                .isEqualTo(surface("mark twain").canonical());
        assertThat(decisions(MemoryChange.EntityDecision.Kind.MERGE))
                .anySatisfy(d -> assertThat(d.rule()).isEqualTo("operator"));
    }

    @Test
    void aMalformedCommandIsDeadLettered() {
        var commands = driver.createInputTopic(
                TOPICS.memoryCommands().name(), new StringSerializer(), new ByteArraySerializer());
        var deadLetters = TestTopics.output(driver, TOPICS.deadLetters());
        commands.pipeInput("wiki", "{\"namespace\": \"wiki\", \"op\": \"explode\"}".getBytes(StandardCharsets.UTF_8));
        commands.pipeInput("wiki", "not json".getBytes(StandardCharsets.UTF_8));
        String id = "0".repeat(32);
        commands.pipeInput(
                "wiki",
                ("{\"namespace\": \"wiki\", \"op\": \"split\", \"entity_id\": \"" + id + "\", \"other_id\": \"" + id
                                + "\", \"reason\": \"\", \"at\": \"2026-01-01T00:00:00Z\"}")
                        .getBytes(StandardCharsets.UTF_8));

        List<DeadLetter> letters = deadLetters.readValuesToList();
        assertThat(letters).extracting(DeadLetter::cause).containsOnly(DeadLetter.Cause.BAD_COMMAND);
        assertThat(letters)
                .extracting(DeadLetter::reason)
                .satisfiesExactly(
                        r -> assertThat(r).startsWith("memory command rejected: schema"),
                        r -> assertThat(r).startsWith("memory command rejected: malformed JSON"),
                        r -> assertThat(r).isEqualTo("memory command rejected: entity_id and other_id must differ"));
    }

    // ---- helpers ----------------------------------------------------------------------------------------------

    private void command(String op, String a, String b, String reason) {
        var commands = driver.createInputTopic(
                TOPICS.memoryCommands().name(),
                new StringSerializer(),
                TOPICS.memoryCommands().valueSerde().serializer());
        commands.pipeInput(
                "wiki",
                new MemoryCommand(
                        "wiki", MemoryCommand.Op.valueOf(op.toUpperCase(Locale.ROOT)), a, b, reason, Instant.EPOCH));
    }

    @Test
    void theEntityViewShowsDeclaredAliasesAsWritten() {
        upsert("bio", "Charles Babbage designed the Difference Engine. Babbage lived in London.");
        EntityRecord charles = surface("charles babbage");
        assertThat(charles.aliases()).containsKey("babbage"); // resolution compares normalized forms
        EntityViews views = new EntityViews(new MemoryReader(name -> driver.<String, Object>getKeyValueStore(name)));
        List<String> aliases = views.byId("wiki", charles.id()).orElseThrow().aliases();
        assertThat(aliases).contains("Babbage").doesNotContain("babbage");
    }

    @Test
    void aHubEntityIsReadOnePageOfPassagesAtATime() {
        for (int i = 0; i < 130; i++) {
            upsert("visit-" + i, "Charles Babbage visited the workshop number " + i + " in London.");
        }
        EntityRecord charles = surface("charles babbage");
        EntityViews views = new EntityViews(new MemoryReader(name -> driver.<String, Object>getKeyValueStore(name)));
        Set<String> seen = new HashSet<>();
        String after = null;
        int pages = 0;
        do {
            Responses.Entity page = views.byId("wiki", charles.id(), after, 50).orElseThrow();
            assertThat(page.passages()).hasSizeLessThanOrEqualTo(50);
            assertThat(page.passageCount()).isEqualTo(130);
            page.passages().forEach(m -> assertThat(seen.add(m.passageId()))
                    .as("no passage on two pages")
                    .isTrue());
            assertThat(page.facts()).allMatch(f -> page.passages().stream()
                    .anyMatch(m -> m.passageId().equals(f.passageId())));
            after = page.next();
            pages++;
        } while (after != null && pages < 10);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).hasSize(130);
    }

    private void upsert(String id, String text) {
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), TestDocuments.upsert("wiki", id, "", text));
    }

    private void delete(String id) {
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), TestDocuments.delete("wiki", id));
    }

    private EntityRecord surface(String normalized) {
        List<EntityRecord> found = new ArrayList<>();
        KeyValueStore<String, EntityRecord> store = driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
        try (KeyValueIterator<String, EntityRecord> it =
                store.prefixScan(Keys.prefix("wiki"), new StringSerializer())) {
            it.forEachRemaining(kv -> {
                if (kv.value.normalized().equals(normalized)) {
                    found.add(kv.value);
                }
            });
        }
        assertThat(found).as("surfaces named '%s'", normalized).hasSize(1);
        return found.get(0);
    }

    private PairDecision pair(EntityRecord a, EntityRecord b) {
        KeyValueStore<String, PairDecision> store = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PAIRS.name());
        PairDecision d = store.get(Keys.of("wiki", a.id(), b.id()));
        assertThat(d).as("decision for %s / %s", a.name(), b.name()).isNotNull();
        assertThat(store.get(Keys.of("wiki", b.id(), a.id())).decision()).isEqualTo(d.decision());
        return d;
    }

    private List<PairDecision> pairs(EntityRecord a) {
        List<PairDecision> out = new ArrayList<>();
        KeyValueStore<String, PairDecision> store = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PAIRS.name());
        try (KeyValueIterator<String, PairDecision> it =
                store.prefixScan(Keys.prefix("wiki", a.id()), new StringSerializer())) {
            it.forEachRemaining(kv -> out.add(kv.value));
        }
        return out;
    }

    private NamespaceState namespace() {
        KeyValueStore<String, NamespaceState> store = driver.getKeyValueStore(StateStores.MEMORY_NAMESPACES.name());
        return store.get("wiki");
    }

    private List<MemoryChange.EntityDecision> decisions(MemoryChange.EntityDecision.Kind decision) {
        return changes.readValuesToList().stream()
                .filter(c -> c instanceof MemoryChange.EntityDecision d && d.decision() == decision)
                .map(c -> (MemoryChange.EntityDecision) c)
                .toList();
    }
}
