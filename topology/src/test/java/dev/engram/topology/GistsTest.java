package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import dev.engram.metrics.Meters;
import dev.engram.query.GistViews;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.Keys;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import dev.engram.stores.ThemeSet;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Document gists, episodic windows and eigen-themes, kept by the memory step as passages come and go. */
class GistsTest {

    private static final Topics TOPICS = new Topics("engram.");

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> documents;

    @BeforeEach
    void start() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "gists-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        driver = new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40), Understanders.embedded(), Meters.detached()),
                props);
        documents = TestTopics.input(driver, TOPICS.documents());
    }

    @AfterEach
    void close() {
        driver.close();
    }

    @Test
    void aDocumentsGistAndWindowsFollowItsPassages() {
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 6; i++) {
            text.append("# Part ")
                    .append(i)
                    .append("\n\nAda Lovelace wrote note ")
                    .append(i)
                    .append(" about the Analytical Engine in London. It was long.\n\n");
        }
        upsert("ada", text.toString());

        DocumentGist gist = gist("ada");
        assertThat(gist.entries()).hasSize(6);
        assertThat(gist.entries()).allSatisfy(e -> assertThat(e.lead()).startsWith("Ada Lovelace wrote note"));
        DocumentGist.View view = view(gist);
        assertThat(view.gist()).hasSize(3).allSatisfy(s -> assertThat(s).doesNotContain("It was long"));
        assertThat(view.windowSize()).isEqualTo(3);
        assertThat(view.windows()).extracting(w -> w.passageIds().size()).containsExactly(3, 3, 3, 3);
        assertThat(view.windows().get(0).passageIds())
                .containsExactlyElementsOf(gist.entries().subList(0, 3).stream()
                        .map(e -> e.passageId())
                        .toList());

        // An update drops two passages: only their entries leave; the rest stay as they were.
        upsert("ada", text.substring(0, text.indexOf("# Part 5")));
        DocumentGist after = gist("ada");
        assertThat(after.entries()).containsExactlyElementsOf(gist.entries().subList(0, 4));
        assertThat(view(after).windows()).hasSize(2);

        delete("ada");
        assertThat(gist("ada")).isNull();
    }

    @Test
    void aDeletedDocumentLeavesTheThemesAtOnceWithItsTextAndQuestions() {
        twentyDocuments();
        ThemeSet before = themes();
        ThemeSet.Theme theme = before.themes().get(1);
        String passageId = theme.passageIds().get(0);
        KeyValueStore<String, StoredPassage> passages = driver.getKeyValueStore(StateStores.MEMORY_PASSAGES.name());
        StoredPassage gone = passages.get(Keys.of("wiki", passageId));
        // every document names its own year: the deleted one's year is in the summary before, and nowhere after
        Matcher year = Pattern.compile("\\b(19\\d\\d)\\b").matcher(gone.text());
        assertThat(year.find()).isTrue();
        String lead = year.group(1);
        assertThat(theme.summary()).contains(lead);

        delete(gone.documentId());

        ThemeSet after = themes();
        assertThat(after.version()).as("not recomputed: retracted").isEqualTo(before.version());
        assertThat(after.themes()).allSatisfy(t -> {
            assertThat(t.passageIds()).doesNotContain(passageId);
            assertThat(t.weights()).hasSameSizeAs(t.passageIds());
            assertThat(t.summary()).doesNotContain(lead);
            assertThat(t.questions())
                    .doesNotContainAnyElementsOf(gone.extraction().questions());
        });
        assertThat(after.themes().get(1).passageIds())
                .hasSize(theme.passageIds().size() - 1);
        assertThat(after.themes().get(1).summary()).isNotBlank();
    }

    @Test
    void themesAreComputedOnceEnoughHasChanged() {
        twentyDocuments();
        NamespaceState state = namespace();
        ThemeSet themes = themes();
        assertThat(themes).as("themes after %d passages", state.passages()).isNotNull();
        assertThat(themes.passages()).isGreaterThanOrEqualTo(16);
        assertThat(themes.themes()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(themes.themes().get(0).eigenvalue()).isCloseTo(1.0, offset(1e-3));
        KeyValueStore<String, StoredPassage> passages = driver.getKeyValueStore(StateStores.MEMORY_PASSAGES.name());
        assertThat(themes.themes()).allSatisfy(theme -> {
            assertThat(theme.passageIds()).hasSize(5);
            assertThat(theme.summary()).isNotBlank();
        });
        // the second theme is one topic: its strongest passages all share the topic's words
        assertThat(themes.themes().get(1).passageIds())
                .extracting(id -> passages.get(Keys.of("wiki", id)).text().contains("violinist"))
                .containsOnly(passages.get(Keys.of(
                                "wiki", themes.themes().get(1).passageIds().get(0)))
                        .text()
                        .contains("violinist"));
        assertThat(state.changesSinceThemes()).isLessThan(16);
    }

    /** Twenty one-passage documents on two topics: enough for the namespace's first themes. */
    private void twentyDocuments() {
        String[] topics = {
            "The violinist %s played a concerto with the Vienna Philharmonic orchestra in %d.",
            "The striker %s scored a goal for Arsenal football club in the %d league final."
        };
        String[] names = {
            "Anna Berg",
            "Carl Dahl",
            "Eva Falk",
            "Gus Holm",
            "Ida Juhl",
            "Kai Lund",
            "Mia Nord",
            "Ola Pihl",
            "Rut Sand",
            "Tor Ulv"
        };
        int n = 0;
        for (int t = 0; t < topics.length; t++) {
            for (String name : names) {
                upsert("doc-" + n, String.format(Locale.ROOT, topics[t], name, 1950 + n));
                n++;
            }
        }
    }

    private void upsert(String id, String text) {
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), TestDocuments.upsert("wiki", id, "T", text));
    }

    private void delete(String id) {
        documents.pipeInput(id.getBytes(StandardCharsets.UTF_8), TestDocuments.delete("wiki", id));
    }

    @Test
    void theGistIsMadeOfThePassagesNearestTheDocumentsCentroidInReadingOrder() {
        List<DocumentGist.Entry> entries = new ArrayList<>();
        Map<String, float[]> vectors = new HashMap<>();
        float[][] vs = {{0, 1, 0}, {1, 0, 0}, {0.9f, 0.1f, 0}, {0, 0, 1}, {0.95f, 0, 0.05f}};
        for (int i = 0; i < vs.length; i++) {
            entries.add(new DocumentGist.Entry("p" + i, i, i * 100, "Lead " + i + "."));
            vectors.put("p" + i, vs[i]);
        }
        DocumentGist.View view = GistViews.view(new DocumentGist("ns", "d", "D", entries, Instant.EPOCH), vectors::get);
        assertThat(view.gist()).containsExactly("Lead 1.", "Lead 2.", "Lead 4.");
        // unknown vectors (a passage just removed from the vector store) score nothing but keep their windows
        DocumentGist.View partial = GistViews.view(
                new DocumentGist("ns", "d", "D", entries, Instant.EPOCH),
                id -> id.equals("p1") ? null : vectors.get(id));
        assertThat(partial.gist()).containsExactly("Lead 0.", "Lead 2.", "Lead 4.");
        assertThat(partial.windows().stream()
                        .mapToInt(w -> w.passageIds().size())
                        .sum())
                .isGreaterThanOrEqualTo(entries.size());
    }

    private DocumentGist.View view(DocumentGist g) {
        KeyValueStore<String, byte[]> vectors = driver.getKeyValueStore(StateStores.MEMORY_VECTORS.name());
        return GistViews.view(g, passageId -> {
            byte[] v = vectors.get(Keys.of(g.namespace(), passageId));
            return v == null ? null : StoredVectors.decode(v);
        });
    }

    private DocumentGist gist(String id) {
        KeyValueStore<String, DocumentGist> store = driver.getKeyValueStore(StateStores.MEMORY_GISTS.name());
        return store.get(Keys.of("wiki", id));
    }

    private ThemeSet themes() {
        KeyValueStore<String, ThemeSet> store = driver.getKeyValueStore(StateStores.MEMORY_THEMES.name());
        return store.get("wiki");
    }

    private NamespaceState namespace() {
        KeyValueStore<String, NamespaceState> store = driver.getKeyValueStore(StateStores.MEMORY_NAMESPACES.name());
        return store.get("wiki");
    }
}
