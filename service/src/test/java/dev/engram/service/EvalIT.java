package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.cli.EvalCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code engram eval} over two small sets, for real: an embedded broker and an instance per set, the default
 * understanding, every question asked over HTTP.
 */
class EvalIT {

    @TempDir
    Path dir;

    /** A set of four documents on unrelated topics and a question on each of two of them. */
    private Path set(String name, String[][] docs) throws Exception {
        Path set = Files.createDirectories(dir.resolve(name));
        List<String> corpus = new ArrayList<>();
        List<String> questions = new ArrayList<>();
        for (String[] d : docs) {
            ObjectNode doc = Json.mapper().createObjectNode();
            doc.put("doc_id", name + "-" + corpus.size());
            doc.put("title", d[0]);
            doc.put("text", d[1]);
            corpus.add(Json.mapper().writeValueAsString(doc));
            if (d.length > 2) {
                ObjectNode q = Json.mapper().createObjectNode();
                q.put("question", d[2]);
                q.putArray("gold_docs").add(d[0] + "\n" + d[1]);
                questions.add(Json.mapper().writeValueAsString(q));
            }
        }
        Files.write(set.resolve("corpus.jsonl"), corpus);
        Files.write(set.resolve("questions.jsonl"), questions);
        return set;
    }

    @Test
    void severalSetsAreEvaluatedAndComparedWithDenseQuestionByQuestion() throws Exception {
        Path alpha = set("alpha", new String[][] {
            {
                "Analytical Engine",
                "Charles Babbage designed the Analytical Engine, a mechanical computer, in 1837.",
                "Who designed the Analytical Engine?"
            },
            {"Sourdough", "Sourdough bread rises with wild yeast and lactic acid bacteria kept in a starter."},
            {
                "Mount Fuji",
                "Mount Fuji is the highest mountain in Japan, a volcano near Tokyo.",
                "What is the highest mountain in Japan?"
            },
            {"Tides", "Tides are caused mainly by the gravity of the Moon acting on the oceans."}
        });
        Path beta = set("beta", new String[][] {
            {
                "Penicillin",
                "Alexander Fleming discovered penicillin in 1928 in a London laboratory.",
                "Who discovered penicillin?"
            },
            {"Chess", "Chess is played on a board of sixty-four squares by two players."},
            {
                "Amazon River",
                "The Amazon River flows through Brazil into the Atlantic Ocean.",
                "Which river flows through Brazil into the Atlantic?"
            },
            {"Violin", "The violin has four strings and is played with a bow."}
        });
        Path out = dir.resolve("eval.json");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();

        EvalCommand.run(
                List.of(
                        "--data",
                        alpha + "," + beta,
                        "--modes",
                        "dense,hybrid",
                        "--per-question",
                        "true",
                        "--out",
                        out.toString()),
                EngramConfig.local(Map.of()),
                new PrintStream(printed, true, StandardCharsets.UTF_8));

        JsonNode result = Json.mapper().readTree(out.toFile());
        assertThat(result.path("sets")).hasSize(2);
        for (JsonNode set : result.path("sets")) {
            assertThat(set.path("questions").asInt()).isEqualTo(2);
            for (String mode : List.of("dense", "hybrid")) {
                JsonNode m = set.path("modes").path(mode);
                JsonNode ranks = m.path("gold_ranks");
                assertThat(ranks).as("%s %s", set.path("dataset"), mode).hasSize(2);
                // the recall reported is the recall of the ranks written
                double within5 = 0;
                for (JsonNode q : ranks) {
                    assertThat(q).hasSize(1);
                    within5 += q.get(0).asInt() >= 1 && q.get(0).asInt() <= 5 ? 1 : 0;
                }
                assertThat(m.path("recall@5").asDouble()).isEqualTo(100 * within5 / 2);
            }
            // each question names its document's topic: dense ranks it first
            assertThat(set.path("modes").path("dense").path("gold_ranks").toString())
                    .isEqualTo("[[1],[1]]");
            // why: what each mode ranked first and what it did, per question
            JsonNode why = set.path("modes").path("hybrid").path("why");
            assertThat(why).hasSize(2);
            assertThat(why.get(0).path("top_titles")).isNotEmpty();
            assertThat(why.get(0).path("explanation").has("cogito")).isTrue();
        }
        JsonNode hybrid = result.path("summary").path("hybrid");
        for (JsonNode set : result.path("sets")) {
            String name = set.path("dataset").asText();
            assertThat(hybrid.path("gain_r5_over_dense").path(name).asDouble())
                    .isEqualTo(set.path("modes").path("hybrid").path("recall@5").asDouble()
                            - set.path("modes").path("dense").path("recall@5").asDouble());
        }
        assertThat(hybrid.path("worst_set").asText()).isIn("alpha", "beta");
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("won/lost")
                .contains("Recall@5 gain over dense, per set, and the worst set");
    }

    /**
     * With a late share, half the documents are sent once the snapshot of the others is built, and every question is
     * answered from that snapshot and a recent layer of the late ones: {@code dense} ranks as over one snapshot of all.
     */
    @Test
    void aLateShareIsAnsweredFromARecentLayerBesideTheSnapshotOfTheRest() throws Exception {
        Path delta = set("delta", new String[][] {
            {"Penicillin", "Alexander Fleming discovered penicillin in 1928.", "Who discovered penicillin?"},
            {"Violin", "The violin has four strings and is played with a bow.", "How many strings has a violin?"},
            {"Tides", "Tides are caused mainly by the gravity of the Moon.", "What causes the tides?"},
            {"Chess", "Chess is played on a board of sixty-four squares.", "On how many squares is chess played?"}
        });
        Path out = dir.resolve("late.json");
        Path keep = dir.resolve("kept-late");

        EvalCommand.run(
                List.of(
                        "--data",
                        delta.toString(),
                        "--modes",
                        "dense,hybrid",
                        "--late-percent",
                        "50",
                        "--keep",
                        keep.toString(),
                        "--per-question",
                        "true",
                        "--out",
                        out.toString()),
                EngramConfig.local(Map.of()),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

        JsonNode result = Json.mapper().readTree(out.toFile());
        assertThat(result.path("late_documents").asInt()).isEqualTo(2);
        JsonNode recent = result.path("recent_layer");
        assertThat(recent.path("passages").asInt()).isEqualTo(2);
        assertThat(recent.path("whole_graph_version").asLong())
                .isLessThan(recent.path("graph_version").asLong());
        assertThat(result.path("modes").path("dense").path("gold_ranks").toString())
                .as("each question names its document's topic, early or late")
                .isEqualTo("[[1],[1],[1],[1]]");
        assertThat(result.path("modes").path("hybrid").path("gold_ranks")).hasSize(4);
        // the same memory answered whole by a later run; a late share of memory kept already is refused
        Path whole = dir.resolve("whole.json");
        EvalCommand.run(
                List.of(
                        "--data",
                        delta.toString(),
                        "--modes",
                        "dense",
                        "--keep",
                        keep.toString(),
                        "--per-question",
                        "true",
                        "--out",
                        whole.toString()),
                EngramConfig.local(Map.of()),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        JsonNode answeredWhole = Json.mapper().readTree(whole.toFile());
        assertThat(answeredWhole.has("recent_layer")).isFalse();
        assertThat(answeredWhole.path("modes").path("dense").path("gold_ranks"))
                .isEqualTo(result.path("modes").path("dense").path("gold_ranks"));
        assertThatThrownBy(() -> EvalCommand.run(
                        List.of("--data", delta.toString(), "--late-percent", "10", "--keep", keep.toString()),
                        EngramConfig.local(Map.of()),
                        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .hasMessageContaining("--late-percent needs a new --keep");
    }

    @Test
    void aKeptIngestAnswersALaterRunWithoutIngestingAgainAndOnlyForItsOwnCorpus() throws Exception {
        Path gamma = set("gamma", new String[][] {
            {"Penicillin", "Alexander Fleming discovered penicillin in 1928.", "Who discovered penicillin?"},
            {"Violin", "The violin has four strings and is played with a bow."}
        });
        Path keep = dir.resolve("kept");
        List<String> args = List.of(
                "--data", gamma.toString(), "--modes", "dense", "--keep", keep.toString(), "--per-question", "true");
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        EngramConfig config = EngramConfig.local(Map.of());

        EvalCommand.run(
                concat(args, "--out", dir.resolve("first.json").toString()),
                config,
                new PrintStream(first, true, StandardCharsets.UTF_8));
        EvalCommand.run(
                concat(args, "--out", dir.resolve("second.json").toString()),
                config,
                new PrintStream(second, true, StandardCharsets.UTF_8));

        assertThat(first.toString(StandardCharsets.UTF_8)).contains("ingested 2 documents");
        assertThat(second.toString(StandardCharsets.UTF_8)).contains("reused the ingest in");
        JsonNode a = Json.mapper().readTree(dir.resolve("first.json").toFile());
        JsonNode b = Json.mapper().readTree(dir.resolve("second.json").toFile());
        assertThat(b.path("modes").path("dense").path("gold_ranks"))
                .isEqualTo(a.path("modes").path("dense").path("gold_ranks"));
        assertThat(b.path("passages")).isEqualTo(a.path("passages"));

        Files.writeString(
                gamma.resolve("corpus.jsonl"), "{\"doc_id\": \"other\", \"title\": \"T\", \"text\": \"x\"}\n");
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThatThrownBy(() -> EvalCommand.run(args, config, quiet)).hasMessageContaining("another corpus");
    }

    private static List<String> concat(List<String> args, String... more) {
        List<String> out = new ArrayList<>(args);
        out.addAll(List.of(more));
        return out;
    }

    @Test
    void setsThatCannotBeToldApartOrServedAreRefusedBeforeAnythingStarts() throws Exception {
        Path a = Files.createDirectories(dir.resolve("x/same"));
        Path b = Files.createDirectories(dir.resolve("y/same"));
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        EngramConfig config = EngramConfig.local(Map.of());

        assertThatThrownBy(() -> EvalCommand.run(List.of("--data", a + "," + b), config, quiet))
                .hasMessageContaining("distinct directory names");
        assertThatThrownBy(() -> EvalCommand.run(
                        List.of("--data", a + "," + dir.resolve("z"), "--serve", "true"), config, quiet))
                .hasMessageContaining("--serve needs exactly one");
        assertThatThrownBy(() -> EvalCommand.run(List.of("--data", ","), config, quiet))
                .hasMessageContaining("at least one directory");
    }
}
