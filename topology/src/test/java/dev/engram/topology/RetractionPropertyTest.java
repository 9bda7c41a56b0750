package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Json;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.PairDecision;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Exact retraction as a property: any interleaving of upserts, updates and deletes of a set of documents ends in the
 * same memory as ingesting only the surviving documents' final versions — same passages, same entities with the same
 * reference counts, same links, same counters — compared through a canonical digest of the stores.
 */
class RetractionPropertyTest {

    private static final Topics TOPICS = new Topics("engram.");

    /** Texts sharing entities across documents, so that reference counts matter (the mirror tests use them too). */
    static final List<String> TEXTS = List.of(
            "# Life\n\nAda Lovelace met Charles Babbage in London.\n\n# Work\n\nShe wrote Note G.",
            "Charles Babbage designed the Analytical Engine. He lived in London.",
            "Alan Turing worked at Bletchley Park. He designed the Bombe in 1940.",
            "The Analytical Engine inspired Alan Turing, who studied at King's College.",
            "Grace Hopper wrote a compiler. She served in the United States Navy.",
            "London hosted the Great Exhibition in 1851. Charles Babbage attended it.",
            "# One\n\nNote G described Bernoulli numbers.\n\n# Two\n\nAda Lovelace wrote Note G.",
            // Entity resolution: partial names, acronyms, spelling variants and ambiguous short forms.
            "Babbage built the Difference Engine in London.",
            "The United States Navy (USN) commissioned ships. USN sailors visited London.",
            "USN officers met Grace Hopper.",
            "Alan Turring worked at Bletchley Park.",
            "Edward Hopper painted Nighthawks. Hopper lived in New York.",
            "Hopper wrote a compiler.",
            "Turing studied at King's College.",
            // Namesakes their descriptions tell apart, and a mention of the name that does not say which.
            "Richard Wright is an English footballer who played for Ipswich Town.",
            "Richard Wright was an American author who wrote Native Son.",
            "Richard Wright wrote Black Boy in Chicago.");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void anyHistoryEndsInTheMemoryOfItsSurvivors(long seed) {
        Random random = new Random(seed);
        List<String[]> history = new ArrayList<>();
        Map<String, String> survivors = new TreeMap<>();
        for (int step = 0; step < 40; step++) {
            String id = "doc-" + random.nextInt(5);
            String ns = random.nextInt(4) == 0 ? "other" : "wiki";
            if (random.nextInt(3) == 0) {
                history.add(new String[] {ns, id, null});
                survivors.remove(ns + "/" + id);
            } else {
                String text = TEXTS.get(random.nextInt(TEXTS.size()));
                history.add(new String[] {ns, id, text});
                survivors.put(ns + "/" + id, text);
            }
        }
        List<String[]> replay = new ArrayList<>();
        survivors.forEach((key, text) -> {
            int slash = key.indexOf('/');
            replay.add(new String[] {key.substring(0, slash), key.substring(slash + 1), text});
        });

        Map<String, Object> afterHistory = digest(run(history, dir.resolve("history")));
        Map<String, Object> afterSurvivors = digest(run(replay, dir.resolve("survivors")));

        assertThat(afterHistory).isEqualTo(afterSurvivors);
    }

    /**
     * The same documents make the same memory whatever order they arrive in: entity groups and pair decisions are a
     * function of the documents, not of which was understood first.
     */
    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14})
    void theSameDocumentsInAnyOrderMakeTheSameMemory(long seed) {
        List<String[]> inOrder = new ArrayList<>();
        for (int i = 0; i < TEXTS.size(); i++) {
            inOrder.add(new String[] {"wiki", "doc-" + i, TEXTS.get(i)});
        }
        List<String[]> shuffled = new ArrayList<>(inOrder);
        Collections.shuffle(shuffled, new Random(seed));

        assertThat(digest(run(shuffled, dir.resolve("shuffled"))))
                .isEqualTo(digest(run(inOrder, dir.resolve("ordered"))));
    }

    /** The texts must make resolution decide something, or the property says nothing about it. */
    @Test
    void theTextsExerciseEntityResolution() {
        List<String[]> all = new ArrayList<>();
        for (int i = 0; i < TEXTS.size(); i++) {
            all.add(new String[] {"wiki", "doc-" + i, TEXTS.get(i)});
        }
        @SuppressWarnings("unchecked")
        TreeSet<String> pairs =
                (TreeSet<String>) digest(run(all, dir.resolve("all"))).get("pairs");
        assertThat(pairs).anySatisfy(p -> assertThat(p).contains(" merge "));
        assertThat(pairs).anySatisfy(p -> assertThat(p).containsAnyOf(" review ", " defer "));
        assertThat(pairs).anySatisfy(p -> assertThat(p).contains(" split "));
    }

    private TopologyTestDriver run(List<String[]> events, Path state) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "retraction-property");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, state.toString());
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        TopologyTestDriver driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40), Understanders.embedded(), Meters.detached()),
                props);
        TestInputTopic<byte[], byte[]> documents = TestTopics.input(driver, TOPICS.documents());
        for (String[] e : events) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("namespace", e[0]);
            doc.put("id", e[1]);
            doc.put("op", e[2] == null ? "delete" : "upsert");
            if (e[2] != null) {
                doc.put("title", "T");
                doc.put("text", e[2]);
            }
            documents.pipeInput(e[1].getBytes(StandardCharsets.UTF_8), Json.toBytes(doc));
        }
        return driver;
    }

    /** Everything that must not depend on history; display names and versions legitimately may. */
    private static Map<String, Object> digest(TopologyTestDriver driver) {
        try (driver) {
            Map<String, Object> d = new TreeMap<>();
            KeyValueStore<String, StoredPassage> passages = driver.getKeyValueStore(StateStores.MEMORY_PASSAGES.name());
            TreeSet<String> p = new TreeSet<>();
            all(passages).forEach(kv -> p.add(kv.key + " " + kv.value.documentId() + " " + kv.value.contentHash()));
            d.put("passages", p);
            KeyValueStore<String, byte[]> vectors = driver.getKeyValueStore(StateStores.MEMORY_VECTORS.name());
            TreeSet<String> v = new TreeSet<>();
            all(vectors).forEach(kv -> v.add(kv.key));
            d.put("vectors", v);
            KeyValueStore<String, EntityRecord> entities = driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
            TreeSet<String> e = new TreeSet<>();
            all(entities).forEach(kv -> {
                EntityRecord x = kv.value;
                e.add(kv.key + " " + x.name() + " " + x.normalized() + " " + x.type() + " mentions=" + x.mentions()
                        + " passages=" + x.passages() + " forms=" + new TreeMap<>(x.forms()) + " aliases="
                        + new TreeMap<>(x.aliases()) + " description=" + x.description() + " representative="
                        + x.representative() + " lsh=" + x.lsh() + " canonical="
                        + x.canonical());
            });
            d.put("entities", e);
            KeyValueStore<String, MentionRecord> links =
                    driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PASSAGES.name());
            TreeSet<String> l = new TreeSet<>();
            all(links)
                    .forEach(kv -> l.add(kv.key + " " + kv.value.mentions() + " " + kv.value.form() + " "
                            + kv.value.spans() + " " + kv.value.aliases() + " " + kv.value.aliasForms() + " "
                            + kv.value.documentId()));
            d.put("links", l);
            // Entity resolution: blocking indexes, pair decisions and resolved groups.
            KeyValueStore<String, String> index = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_INDEX.name());
            TreeSet<String> ix = new TreeSet<>();
            all(index).forEach(kv -> ix.add(kv.key));
            d.put("index", ix);
            KeyValueStore<String, PairDecision> pairs = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PAIRS.name());
            TreeSet<String> pd = new TreeSet<>();
            all(pairs)
                    .forEach(kv -> pd.add(kv.key + " " + kv.value.decision().wireName() + " " + kv.value.rule() + " "
                            + kv.value.score() + " " + kv.value.evidence()));
            d.put("pairs", pd);
            // Gists and episodic windows (themes are recomputed on thresholds of changes, so they follow history).
            KeyValueStore<String, DocumentGist> gists = driver.getKeyValueStore(StateStores.MEMORY_GISTS.name());
            TreeSet<String> gs = new TreeSet<>();
            all(gists).forEach(kv -> gs.add(kv.key + " " + kv.value.entries()));
            d.put("gists", gs);
            KeyValueStore<String, String> members = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_MEMBERS.name());
            TreeSet<String> mb = new TreeSet<>();
            all(members).forEach(kv -> mb.add(kv.key));
            d.put("members", mb);
            KeyValueStore<String, ReviewItem> reviews = driver.getKeyValueStore(StateStores.MEMORY_REVIEWS.name());
            TreeSet<String> r = new TreeSet<>();
            all(reviews).forEach(kv -> r.add(kv.key + " " + kv.value.subject() + " " + kv.value.reason()));
            d.put("reviews", r);
            KeyValueStore<String, DocumentRecord> documents =
                    driver.getKeyValueStore(StateStores.MEMORY_DOCUMENTS.name());
            TreeSet<String> docs = new TreeSet<>();
            all(documents).stream()
                    .filter(kv -> kv.value.status() != DocumentStatus.ARCHIVED)
                    .forEach(kv -> docs.add(kv.key + " " + kv.value.status() + " " + kv.value.passages()));
            d.put("documents", docs);
            KeyValueStore<String, NamespaceState> namespaces =
                    driver.getKeyValueStore(StateStores.MEMORY_NAMESPACES.name());
            TreeSet<String> n = new TreeSet<>();
            all(namespaces)
                    .forEach(kv -> n.add(kv.key + " documents=" + kv.value.documents() + " passages="
                            + kv.value.passages() + " entities=" + kv.value.entities() + " surfaces="
                            + kv.value.surfaces()));
            // The status counters the namespace keeps agree with its documents (ARCHIVED ones follow history).
            all(namespaces).forEach(kv -> {
                Map<DocumentStatus, Long> scanned = new EnumMap<>(DocumentStatus.class);
                all(documents).stream()
                        .filter(doc -> doc.value.namespace().equals(kv.key))
                        .forEach(doc -> scanned.merge(doc.value.status(), 1L, Long::sum));
                assertThat(kv.value.documentsByStatus())
                        .as("status counters of " + kv.key)
                        .isEqualTo(scanned);
            });
            d.put(
                    "namespaces",
                    n.stream()
                            .filter(s -> !s.endsWith("documents=0 passages=0 entities=0 surfaces=0"))
                            .toList());
            return d;
        }
    }

    private static <V> List<KeyValue<String, V>> all(KeyValueStore<String, V> store) {
        List<KeyValue<String, V>> out = new ArrayList<>();
        try (KeyValueIterator<String, V> it = store.all()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }
}
