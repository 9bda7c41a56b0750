package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.processors.ReadProcessor;
import dev.engram.query.GraphLoader;
import dev.engram.query.VectorSearch;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.RecentLayer;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.DocumentEvent;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MemoryLogEntry;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StoredPassage;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.Understander;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A namespace's snapshot built from the passages its previous snapshot kept, reading only what changed, is the
 * snapshot a build from scratch makes: through inserts, an update, a delete, and merges and unmerges of entities that
 * change no passage.
 */
class IncrementalSnapshotTest {

    private static final Topics TOPICS = new Topics("engram.");
    private static final List<String> QUESTIONS = List.of(
            "Who worked with Ada Lovelace?",
            "Which navy commissioned ships in 1940?",
            "What did Babbage build?",
            "Who explored Australia?");

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> documents;
    private MemoryReader memory;
    private final Meters meters = Meters.detached();
    /** Kept across the test's steps, as an instance keeps it. */
    private GraphLoader incremental;

    @BeforeEach
    void start() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "incremental-snapshot-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40), Understanders.embedded(), Meters.detached()),
                props);
        documents = TestTopics.input(driver, TOPICS.documents());
        memory = new MemoryReader(name -> driver.<String, Object>getKeyValueStore(name));
        incremental = new GraphLoader(
                GraphLoader.Settings.of(0, 60_000).withIndexDir(indexDir()).withCompaction(0),
                new VectorSearch(1, 100),
                meters);
    }

    /**
     * Where the incremental loader keeps its indexes and its vector arenas: on disk, as an instance does. Its arenas are
     * compacted as soon as half their values are no longer used, so that every test's updates and deletes compact them.
     */
    private Path indexDir() {
        return stateDir.resolve("vector-index");
    }

    /** The incremental loader's arena files. */
    private List<String> arenaFiles() {
        try (Stream<Path> files = Files.list(indexDir().resolve("@arenas"))) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterEach
    void close() {
        incremental.close();
        driver.close();
    }

    /**
     * A loader that rebuilds a changed namespace's snapshot at the next query, searching every kind of vector in an
     * HNSW graph (in memory) however few there are, as a large namespace does.
     */
    private static GraphLoader loader(Meters meters) {
        return loader(meters, null);
    }

    private static GraphLoader loader(Meters meters, String embedder) {
        return new GraphLoader(
                GraphLoader.Settings.of(0, 60_000).withEmbedder(embedder), new VectorSearch(1, 100), meters);
    }

    @Test
    void aSnapshotKeptFromTheLastReadsOnlyWhatChangedAndEqualsOneBuiltFromScratch() {
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("engine", "Babbage built the Difference Engine in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild())
                .as("the first snapshot reads every passage")
                .isEqualTo(4);

        // USN merges with the United States Navy: the navy's passage is not written again, but its entity changes
        upsert("sailors", "USN sailors visited London.");
        assertThat(surface("usn").canonical())
                .isEqualTo(surface("united states navy").canonical());
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("only the new passage").isEqualTo(1);

        // shared context: Babbage merges with Charles Babbage
        upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
        assertThat(surface("babbage").canonical())
                .isEqualTo(surface("charles babbage").canonical());
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("the changed passage").isEqualTo(1);

        // a second Babbage undoes that merge; the navy leaves, and USN stands alone again
        upsert("son", "Benjamin Babbage explored Australia from London.");
        delete("navy");
        assertThat(surface("babbage").canonical()).isEqualTo(surface("babbage").id());
        assertThat(surface("usn").canonical()).isEqualTo(surface("usn").id());
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild())
                .as("the new passage; the deleted one is left out")
                .isEqualTo(1);

        // a new version that changed no passage: every passage is kept
        NamespaceState state = namespace();
        driver.<String, MemoryLogEntry>getKeyValueStore("memory-log")
                .put(
                        MemoryLogEntry.key("wiki", state.version() + 1),
                        MemoryLogEntry.of(state.version(), List.of(), List.of()));
        driver.<String, NamespaceState>getKeyValueStore("memory-namespaces").put("wiki", state.nextVersion());
        long keptBefore = kept();
        MemoryGraph g = incremental.graph("wiki", namespace(), memory);
        assertThat(g.version()).isEqualTo(state.version() + 1);
        assertThat(readSinceLastBuild()).isZero();
        assertThat(kept() - keptBefore).isEqualTo(g.passageCount()).isEqualTo(state.passages());
    }

    /**
     * When the namespace's log does not hold every transaction since the last snapshot (its oldest entries were
     * removed, or memory was written before the log was kept), the next build reads memory whole; the builds after it
     * read only what changed again.
     */
    @Test
    void aLogWithAGapSinceTheLastSnapshotMakesAWholeRead() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).isEqualTo(2);
        long before = namespace().version();

        upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        KeyValueStore<String, MemoryLogEntry> log = driver.getKeyValueStore("memory-log");
        List<String> entries = new ArrayList<>();
        try (var it = log.range(MemoryLogEntry.key("wiki", before + 1), MemoryLogEntry.key("wiki", Long.MAX_VALUE))) {
            it.forEachRemaining(kv -> entries.add(kv.key));
        }
        assertThat(entries).as("one entry per transaction").hasSizeGreaterThanOrEqualTo(2);
        assertThat(log.get(entries.get(0)).since()).isEqualTo(before);
        log.delete(entries.get(0)); // as if removed as too old
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("read whole").isEqualTo(4);

        upsert("sailors", "USN sailors visited London.");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("only the new passage").isEqualTo(1);

        // a transaction that changed too much to be listed
        upsert("party", "Charles Babbage met Ada Lovelace at a party in London.");
        long at = namespace().version();
        MemoryLogEntry listed = log.get(MemoryLogEntry.key("wiki", at));
        assertThat(listed.passages()).hasSize(1);
        log.put(MemoryLogEntry.key("wiki", at), new MemoryLogEntry(listed.since(), List.of(), List.of(), true));
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("read whole").isEqualTo(6);

        // the last transaction's entry missing: memory is at a version the log has not reached
        upsert("son", "Benjamin Babbage explored Australia from London.");
        log.delete(MemoryLogEntry.key("wiki", namespace().version()));
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("read whole").isEqualTo(7);
    }

    /** Once told that memory's stores were restored, the loader reads memory whole at the next build. */
    @Test
    void whatWasKeptIsForgottenWhenMemoryIsRestored() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).isEqualTo(2);
        upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
        incremental.forgetKept();
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).as("read whole").isEqualTo(3);
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).isEqualTo(1);

        // a snapshot read before a restore is built again at the next query, though memory's version has not moved
        MemoryGraph before = incremental.graph("wiki", namespace(), memory);
        assertThat(incremental.graph("wiki", namespace(), memory)).isSameAs(before);
        incremental.forgetKept(ns -> ns.equals("another"));
        assertThat(incremental.graph("wiki", namespace(), memory))
                .as("another namespace's restore")
                .isSameAs(before);
        incremental.forgetKept(ns -> ns.equals("wiki"));
        MemoryGraph after = incremental.graph("wiki", namespace(), memory);
        assertThat(after).isNotSameAs(before);
        assertThat(after.version()).isEqualTo(before.version());
        assertThat(readSinceLastBuild()).as("read whole").isEqualTo(4);
        assertThat(incremental.graph("wiki", namespace(), memory)).isSameAs(after);
    }

    /**
     * A resolved entity is named after its most mentioned surface. When another surface of it comes to be mentioned
     * more, the passages that mention the first one do not change, nor does its surface, yet the name their mentions
     * resolve to does. The passage of the first surface is chosen to come first in id order, so that its mention is
     * the one that names the entity in the snapshot.
     */
    @Test
    void anEntityRenamedByAnotherSurfaceIsRenamedInPassagesThatDidNotChange() {
        Map<String, String> babbage = Map.of(
                "engine", "Babbage built the Difference Engine with Ada Lovelace.",
                "design", "Babbage designed the Analytical Engine for Ada Lovelace.",
                "meeting", "Babbage met Ada Lovelace in London.",
                "letters", "Babbage wrote letters to Ada Lovelace about the engine.");
        String first = babbage.entrySet().stream()
                .map(e -> passageIdOf(e.getKey(), e.getValue()))
                .min(String::compareTo)
                .orElseThrow();
        String charles = null;
        for (int i = 0; i < 1000 && charles == null; i++) {
            if (passageIdOf("charles-" + i, CHARLES).compareTo(first) < 0) {
                charles = "charles-" + i;
            }
        }
        assertThat(charles).as("a document id whose passage comes first").isNotNull();
        upsert(charles, CHARLES);
        upsert("party", "Charles Babbage met Ada Lovelace at a party in London.");
        upsert("engine", babbage.get("engine"));
        assertThat(surface("babbage").canonical())
                .isEqualTo(surface("charles babbage").canonical());
        assertSameAsFromScratch();
        EntityRecord before = surface("charles babbage");
        assertThat(firstPassageOf(charles)).isEqualTo(passageIdOf(charles, CHARLES));
        MemoryGraph named = incremental.graph("wiki", namespace(), memory);
        assertThat(named.entityName(named.entityIndex(before.canonical())))
                .as("named after the surface mentioned most")
                .isEqualTo(before.name());
        long logFrom = namespace().version();

        upsert("design", babbage.get("design"));
        upsert("meeting", babbage.get("meeting"));
        upsert("letters", babbage.get("letters"));
        assertThat(surface("babbage").canonical())
                .isEqualTo(surface("charles babbage").canonical());
        assertThat(surface("charles babbage")).as("not changed").isEqualTo(before);
        assertThat(surface("babbage").mentions()).isGreaterThan(before.mentions());
        KeyValueStore<String, MemoryLogEntry> log = driver.getKeyValueStore("memory-log");
        List<String> logged = new ArrayList<>();
        try (var it = log.range(MemoryLogEntry.key("wiki", logFrom + 1), MemoryLogEntry.key("wiki", Long.MAX_VALUE))) {
            it.forEachRemaining(kv -> logged.addAll(kv.value.surfaces()));
        }
        assertThat(logged).as("the log does not name his surface").doesNotContain(before.id());
        assertSameAsFromScratch();
        MemoryGraph renamed = incremental.graph("wiki", namespace(), memory);
        assertThat(renamed.entityName(renamed.entityIndex(before.canonical())))
                .isEqualTo(surface("babbage").name())
                .isNotEqualTo(before.name());
    }

    /**
     * Beside a costly snapshot rebuilt in the background, a query reads a recent layer: the passages memory changed
     * since that snapshot, each with its entities resolved as memory resolves them now (as a whole build from scratch
     * resolves them), and none of the passages deleted since. Ranked with the snapshot, the new passage is found.
     */
    @Test
    void aRecentLayerHoldsThePassagesChangedSinceTheSnapshotResolvedAsMemoryIsNow() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        // every build costly enough for the background, and a whole snapshot that serves for a minute while written
        try (GraphLoader loader =
                new GraphLoader(GraphLoader.Settings.of(60_000, 0), new VectorSearch(1, 100), Meters.detached())) {
            GraphLoader.Layers before = loader.layers("wiki", namespace(), memory);
            assertThat(before.recent()).isNull();
            String navy = firstPassageOf("navy");

            upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
            upsert("sailors", "USN sailors visited London.");
            delete("navy");
            // Babbage now merges with Charles Babbage, a surface of a passage that did not change
            assertThat(surface("babbage").canonical())
                    .isEqualTo(surface("charles babbage").canonical());
            GraphLoader.Layers layers = loader.layers("wiki", namespace(), memory);

            assertThat(layers.base()).isSameAs(before.base());
            MemoryGraph recent = layers.recent();
            assertThat(recent).isNotNull();
            assertThat(recent.version()).isEqualTo(namespace().version());
            assertThat(layers.version()).isEqualTo(namespace().version());
            assertThat(passageIds(recent))
                    .containsExactlyInAnyOrder(firstPassageOf("engine"), firstPassageOf("sailors"))
                    .doesNotContain(navy);
            try (GraphLoader fresh = loader(Meters.detached())) {
                MemoryGraph scratch = fresh.graph("wiki", namespace(), memory);
                Map<String, List<String>> resolvedNow = entitiesByPassage(scratch);
                for (Map.Entry<String, List<String>> e :
                        entitiesByPassage(recent).entrySet()) {
                    assertThat(e.getValue())
                            .as("the entities of %s", e.getKey())
                            .isNotEmpty()
                            .isEqualTo(resolvedNow.get(e.getKey()));
                }
            }

            float[] q = Understanders.embedded().embedder().embed("What did Babbage build?");
            Retrieval.Mode dense = Retrieval.mode("dense");
            List<RecentLayer.Hit> hits = RecentLayer.retrieve(
                            dense,
                            Retrieval.params(dense, Map.of()),
                            5,
                            layers.base(),
                            Retrieval.Query.of("q", q, t -> q),
                            recent,
                            Retrieval.Query.of("q", q, t -> q),
                            layers.changed(),
                            layers.shadowed())
                    .hits();
            assertThat(layers.changed())
                    .as("the deleted passage too")
                    .contains(navy, firstPassageOf("engine"), firstPassageOf("sailors"));
            assertThat(layers.shadowed())
                    .as("of the snapshot, the navy's passage")
                    .isEqualTo(1);
            assertThat(hits.get(0).graph()).isSameAs(recent);
            assertThat(hits.get(0).graph().passage(hits.get(0).passage()).id()).isEqualTo(firstPassageOf("engine"));
        }
    }

    private static List<String> passageIds(MemoryGraph g) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < g.passageCount(); i++) {
            out.add(g.passage(i).id());
        }
        return out;
    }

    /** Each passage's entities, by resolved id in id order. */
    private static Map<String, List<String>> entitiesByPassage(MemoryGraph g) {
        Map<String, TreeSet<String>> sets = new HashMap<>();
        for (int e = 0; e < g.entityCount(); e++) {
            for (int p : g.entityPassages(e)) {
                sets.computeIfAbsent(g.passage(p).id(), k -> new TreeSet<>()).add(g.entityId(e));
            }
        }
        Map<String, List<String>> out = new HashMap<>();
        sets.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return out;
    }

    private static final String CHARLES = "Charles Babbage worked with Ada Lovelace in London.";

    /** The id of the one passage of a short document, as the read step cuts it. */
    private static String passageIdOf(String documentId, String text) {
        DocumentEvent event =
                new DocumentEvent("wiki", documentId, DocumentEvent.Op.UPSERT, "", text, null, null, null);
        List<ReadProcessor.Planned> planned = ReadProcessor.passages(new Chunker(40), event);
        assertThat(planned).hasSize(1);
        return planned.get(0).ref().passageId();
    }

    /**
     * A query that read the namespace's state of a transaction that was then rolled back (exactly-once) asks for a
     * version memory no longer holds: the snapshot is built at the version memory holds, so that the next change is
     * read through the log from there.
     */
    @Test
    void aSnapshotIsBuiltAtTheVersionMemoryHoldsNotAtARolledBackOne() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        NamespaceState held = namespace();
        NamespaceState rolledBack = held.nextVersion().nextVersion().nextVersion();
        MemoryGraph g = incremental.graph("wiki", rolledBack, memory);
        assertThat(g.version()).isEqualTo(held.version());
        assertThat(readSinceLastBuild()).isEqualTo(2);
        upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild())
                .as("only what changed since what was read")
                .isEqualTo(1);
    }

    /**
     * A passage memory writes again under the same id (understood again, or deleted and written back between two
     * snapshots) is named in the namespace's log: the snapshot reads it again. Written here into the stores as the memory step
     * would, with a text that shows which of the two the snapshot holds.
     */
    @Test
    void aPassageWrittenAgainUnderItsIdIsReadAgain() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        assertSameAsFromScratch();
        readSinceLastBuild();

        var passages = driver.<String, StoredPassage>getKeyValueStore("memory-passages");
        String id = firstPassageOf("bio");
        String key = Keys.of("wiki", id);
        StoredPassage p = passages.get(key);
        String text = p.text().replace("London", "Paris");
        passages.put(
                key,
                new StoredPassage(
                        p.namespace(),
                        p.documentId(),
                        p.passageId(),
                        p.documentVersion(),
                        p.ordinal(),
                        p.contentHash(),
                        p.title(),
                        p.headings(),
                        text,
                        p.start(),
                        p.end(),
                        p.extraction(),
                        p.entityIds(),
                        p.embedder()));
        NamespaceState state = namespace();
        driver.<String, MemoryLogEntry>getKeyValueStore("memory-log")
                .put(
                        MemoryLogEntry.key("wiki", state.version() + 1),
                        MemoryLogEntry.of(state.version(), List.of(id), List.of()));
        var namespaces = driver.<String, NamespaceState>getKeyValueStore("memory-namespaces");
        namespaces.put("wiki", state.nextVersion());

        MemoryGraph g = incremental.graph("wiki", namespace(), memory);
        assertThat(readSinceLastBuild()).isEqualTo(1);
        assertThat(passageTexts(g)).contains(text);
        assertSameAsFromScratch();
    }

    /** A document that goes back to an earlier text within one snapshot's time: its passage returns under its id. */
    @Test
    void aPassageThatLeavesAndReturnsBetweenTwoSnapshotsIsReadAgain() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        assertSameAsFromScratch();
        String id = firstPassageOf("bio");
        readSinceLastBuild();
        upsert("bio", "Charles Babbage worked in London.");
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        assertThat(firstPassageOf("bio")).isEqualTo(id);
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild()).isEqualTo(1);
    }

    private String firstPassageOf(String documentId) {
        List<String> ids = new ArrayList<>();
        memory.forEachPassage("wiki", p -> {
            if (p.documentId().equals(documentId)) {
                ids.add(p.passageId());
            }
        });
        assertThat(ids).hasSize(1);
        return ids.get(0);
    }

    private static List<String> passageTexts(MemoryGraph g) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < g.passageCount(); i++) {
            out.add(g.passage(i).text());
        }
        return out;
    }

    /**
     * Passages another model embedded (the namespace was filled before a change of the embedder) are read once, left
     * out of every snapshot, and not read again while they do not change.
     */
    @Test
    void passagesOfAnotherModelAreReadOnceAndLeftOut() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        Meters counted = Meters.detached();
        try (GraphLoader other = loader(counted, "another-model")) {
            assertThat(other.graph("wiki", namespace(), memory).passageCount()).isZero();
            upsert("engine", "Babbage built the Difference Engine with Ada Lovelace.");
            assertThat(other.graph("wiki", namespace(), memory).passageCount()).isZero();
            assertThat(counted.registry()
                            .get(Meters.SNAPSHOT_PASSAGES)
                            .tag("source", "stores")
                            .counter()
                            .count())
                    .as("none put into a snapshot")
                    .isZero();
        }
    }

    /**
     * A passage written again and again leaves values its snapshots no longer use in its namespace's arena: once they
     * are half of it, a build copies the used ones into a new arena and deletes the old one's file, and the snapshots
     * answer as before.
     */
    @Test
    void anArenaMostlyOfOldVectorsIsCompactedAndItsFileDeleted() {
        upsert("bio", "Charles Babbage worked with Ada Lovelace in London.");
        upsert("program", "Ada Lovelace wrote the first program for the Analytical Engine.");
        assertSameAsFromScratch();
        List<String> first = arenaFiles();
        assertThat(first).hasSize(1);
        List<String> seen = new ArrayList<>(first);
        readSinceLastBuild();
        for (int i = 0; i < 6; i++) {
            upsert("engine", "Babbage built the Difference Engine number " + i + " in London.");
            assertSameAsFromScratch();
            assertThat(readSinceLastBuild())
                    .as("a compaction reads nothing again")
                    .isEqualTo(1);
            List<String> now = arenaFiles();
            assertThat(now)
                    .as("one arena per namespace, the replaced one deleted")
                    .hasSize(1);
            if (!seen.contains(now.get(0))) {
                seen.add(now.get(0));
            }
        }
        assertThat(seen).as("compacted into new arenas").hasSizeGreaterThan(1);
        readSinceLastBuild();
        upsert("navy", "The United States Navy commissioned new ships in 1940.");
        delete("program");
        assertSameAsFromScratch();
        assertThat(readSinceLastBuild())
                .as("still incremental after compactions")
                .isEqualTo(1);
        assertThat(meters.registry().get(Meters.SNAPSHOT_VECTOR_ARENA).gauge().value())
                .as("the gauge of the arenas' values")
                .isPositive();
        incremental.close();
        assertThat(arenaFiles()).as("closing the loader deletes its arenas").isEmpty();
        assertThat(meters.registry().get(Meters.SNAPSHOT_VECTOR_ARENA).gauge().value())
                .isZero();
        incremental = loader(meters);
    }

    private long read = 0;

    private long kept() {
        return (long) meters.registry()
                .get(Meters.SNAPSHOT_PASSAGES)
                .tag("source", "kept")
                .counter()
                .count();
    }

    /** Passages read from the stores by the incremental loader's builds since the last call. */
    private long readSinceLastBuild() {
        long total = (long) meters.registry()
                .get(Meters.SNAPSHOT_PASSAGES)
                .tag("source", "stores")
                .counter()
                .count();
        long since = total - read;
        read = total;
        return since;
    }

    private void assertSameAsFromScratch() {
        NamespaceState state = namespace();
        MemoryGraph kept = incremental.graph("wiki", state, memory);
        try (GraphLoader fresh = loader(Meters.detached())) {
            MemoryGraph scratch = fresh.graph("wiki", state, memory);
            assertThat(kept.version()).isEqualTo(state.version());
            assertThat(kept.passageCount()).isEqualTo(scratch.passageCount()).isEqualTo(state.passages());
            assertThat(kept.entityCount()).isEqualTo(scratch.entityCount());
            for (int e = 0; e < scratch.entityCount(); e++) {
                assertThat(kept.entityId(e)).isEqualTo(scratch.entityId(e));
                assertThat(kept.entityName(e)).isEqualTo(scratch.entityName(e));
                assertThat(kept.entityType(e)).isEqualTo(scratch.entityType(e));
                assertThat(kept.entityPassages(e)).isEqualTo(scratch.entityPassages(e));
            }
            assertThat(kept.factCount()).isEqualTo(scratch.factCount());
            for (int f = 0; f < scratch.factCount(); f++) {
                assertThat(kept.fact(f)).isEqualTo(scratch.fact(f));
                assertThat(kept.factText(f)).isEqualTo(scratch.factText(f));
            }
            assertThat(kept.relationCount()).isEqualTo(scratch.relationCount());
            for (int r = 0; r < scratch.relationCount(); r++) {
                assertThat(kept.relationText(r)).isEqualTo(scratch.relationText(r));
                assertThat(kept.relation(r).passage())
                        .isEqualTo(scratch.relation(r).passage());
                assertThat(kept.relation(r).entities())
                        .isEqualTo(scratch.relation(r).entities());
            }
            assertThat(kept.relationTypes()).isEqualTo(scratch.relationTypes());
            for (int i = 0; i < scratch.passageCount(); i++) {
                assertThat(kept.passage(i)).isEqualTo(scratch.passage(i));
            }
            Understander understander = Understanders.embedded();
            for (String question : QUESTIONS) {
                float[] q = understander.embedder().embed(question);
                assertThat(kept.nearestEntities(q, 5)).isEqualTo(scratch.nearestEntities(q, 5));
                for (String mode : Retrieval.modes()) {
                    assertThat(answers(kept, mode, question, q))
                            .as("%s: %s", mode, question)
                            .isEqualTo(answers(scratch, mode, question, q));
                }
            }
        }
    }

    /** A mode's ranked passages, by id with their scores. */
    private static List<Map.Entry<String, Double>> answers(MemoryGraph g, String mode, String question, float[] q) {
        int[] entities =
                g.nearestEntities(q, 3).stream().mapToInt(g::entityIndex).toArray();
        Retrieval.Mode m = Retrieval.mode(mode);
        Retrieval.Result r = m.retrieve(
                g,
                Retrieval.Query.of(question, q, Understanders.embedded().embedder()::embed)
                        .withEntities(entities),
                Retrieval.params(m, Map.of()),
                5);
        return r.ranked().stream()
                .map(s -> Map.entry(g.passage(s.passage()).id(), s.score()))
                .toList();
    }

    private NamespaceState namespace() {
        return memory.namespace("wiki").orElseThrow();
    }

    private EntityRecord surface(String name) {
        List<EntityRecord> found = new ArrayList<>();
        memory.forEachEntity("wiki", e -> {
            if (e.name().equalsIgnoreCase(name)) {
                found.add(e);
            }
        });
        assertThat(found).as("surface %s", name).hasSize(1);
        return found.get(0);
    }

    private void upsert(String id, String text) {
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), TestDocuments.upsert("wiki", id, "", text));
    }

    private void delete(String id) {
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), TestDocuments.delete("wiki", id));
    }
}
