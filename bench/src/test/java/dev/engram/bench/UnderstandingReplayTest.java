package dev.engram.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.processors.Verifier;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EventPosition;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Schemas;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.Hashing;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.RuleExtractor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UnderstandingReplayTest {

    private static final String TEXT = "Charles Babbage designed the Analytical Engine in London. Ada Lovelace wrote"
            + " Note G about the Engine in 1843, and Babbage praised it.";

    /** The base document's manifest and its one understood passage, as the read and understand steps write them. */
    private static List<JsonNode> base() {
        String hash = Hashing.sha256Hex(TEXT);
        String pid = Hashing.id("ns", "doc", hash, "1");
        PassageEvent.Upsert passage = new PassageEvent.Upsert(
                "ns", "doc", 1, pid, 0, hash, "Babbage", List.of("Engines"), TEXT, 0, TEXT.length(), null, null);
        Extraction extraction = new RuleExtractor(new EnglishNlp(), 2).extract(passage);
        Random r = new Random(1);
        float[] passageVector = unit(r);
        Embeddings embeddings = new Embeddings(
                passageVector,
                new float[0],
                extraction.entities().stream().map(e -> unit(r)).toList(),
                extraction.facts().stream().map(f -> unit(r)).toList(),
                // a utility question's vector: the normalized mean of the question's and the passage's
                extraction.questions().stream()
                        .map(q -> mean(unit(r), passageVector))
                        .toList());
        UnderstandingEvent manifest = new UnderstandingEvent.Manifest(
                "ns",
                "doc",
                1,
                DocumentEvent.Op.UPSERT,
                "Babbage",
                null,
                Map.of(),
                Instant.parse("2026-01-01T00:00:00Z"),
                List.of(new UnderstandingEvent.PassageRef(pid, hash)),
                new EventPosition("documents", 0, 41),
                List.of());
        UnderstandingEvent understood =
                new UnderstandingEvent.Understood(passage, new Understanding(extraction, embeddings, "model"));
        return List.of(tree(manifest), tree(understood));
    }

    @Test
    void aCopyIsTheBaseUnderstandingRenamedWithItsOwnIdsSpansAndVectors() throws IOException {
        List<JsonNode> base = base();
        Map<String, List<byte[]>> recorded = new LinkedHashMap<>();
        recorded.put("doc", base.stream().map(UnderstandingReplayTest::bytes).toList());
        CopyNames names = new CopyNames(Set.of("London", "Engine"));
        UnderstandingReplay replay = new UnderstandingReplay(recorded, names);

        List<JsonNode> copy = replay.copy("doc", TEXT, 3);
        assertThat(copy).hasSize(2);
        JsonNode manifest = copy.get(0);
        JsonNode understood = copy.get(1);
        for (JsonNode e : copy) {
            assertThat(Schemas.UNDERSTANDING.validate(e)).as(e.toString()).isEmpty();
            Json.mapper().convertValue(e, UnderstandingEvent.class); // binds as the memory step reads it
        }

        // its own document, passage id and content hash, the same in the manifest and the passage
        assertThat(manifest.path("document_id").asText()).isEqualTo("doc~3");
        assertThat(manifest.path("input").isNull()).isTrue();
        JsonNode passage = understood.path("passage");
        assertThat(passage.path("document_id").asText()).isEqualTo("doc~3");
        JsonNode ref = manifest.path("passages").get(0);
        assertThat(passage.path("passage_id").asText())
                .isEqualTo(ref.path("passage_id").asText())
                .isNotEqualTo(base.get(1).path("passage").path("passage_id").asText())
                .matches("[0-9a-f]{32}");
        assertThat(passage.path("content_hash").asText())
                .isEqualTo(ref.path("content_hash").asText())
                .isNotEqualTo(base.get(1).path("passage").path("content_hash").asText());
        assertThat(replay.copy("doc", TEXT, 4)
                        .get(1)
                        .path("passage")
                        .path("passage_id")
                        .asText())
                .isNotEqualTo(passage.path("passage_id").asText());

        // the text renamed as the copy of the document is, common words kept; the title and headings too
        String text = passage.path("text").asText();
        assertThat(text)
                .isEqualTo(names.rename(TEXT, 3))
                .doesNotContain("Babbage")
                .contains("London", "Engine");
        assertThat(manifest.path("title").asText()).isEqualTo(names.rename("Babbage", 3));
        assertThat(passage.path("title").asText())
                .isEqualTo(manifest.path("title").asText());

        // its offsets in its document moved with the renamed words
        assertThat(passage.path("start").asInt()).isZero();
        assertThat(passage.path("end").asInt()).isEqualTo(text.length());

        // the memory step keeps the same names and facts of the copy as of the base
        Extraction baseExtraction =
                Json.mapper().treeToValue(base.get(1).path("understanding").path("extraction"), Extraction.class);
        Extraction copyExtraction =
                Json.mapper().treeToValue(understood.path("understanding").path("extraction"), Extraction.class);
        PassageEvent.Upsert copyPassage = Json.mapper().treeToValue(passage, PassageEvent.Upsert.class);
        Verifier.Verified verifiedBase = Verifier.verify(TEXT, baseExtraction);
        Verifier.Verified verifiedCopy = Verifier.verify(text, copyExtraction, Verifier.Circumstances.of(copyPassage));
        assertThat(verifiedCopy.entities()).isEqualTo(verifiedBase.entities()).isNotEmpty();
        assertThat(verifiedCopy.facts()).isEqualTo(verifiedBase.facts());

        // every entity's span covers its renamed name in the renamed text, as it covered the name in the base
        JsonNode baseEntities =
                base.get(1).path("understanding").path("extraction").path("entities");
        JsonNode entities = understood.path("understanding").path("extraction").path("entities");
        assertThat(entities).hasSameSizeAs(baseEntities);
        int spans = 0;
        for (int i = 0; i < entities.size(); i++) {
            JsonNode e = entities.get(i);
            assertThat(e.path("name").asText())
                    .isEqualTo(names.rename(baseEntities.get(i).path("name").asText(), 3));
            assertThat(e.path("type").asText())
                    .isEqualTo(baseEntities.get(i).path("type").asText());
            for (int s = 0; s < e.path("spans").size(); s++) {
                JsonNode was = baseEntities.get(i).path("spans").get(s);
                JsonNode span = e.path("spans").get(s);
                String before = TEXT.substring(
                        was.path("start").asInt(), was.path("end").asInt());
                assertThat(text.substring(
                                span.path("start").asInt(), span.path("end").asInt()))
                        .isEqualTo(names.rename(before, 3));
                spans++;
            }
        }
        assertThat(spans).as("the extractor found names with spans").isGreaterThan(2);
        assertThat(understood.path("understanding").path("extraction").path("extractor"))
                .isEqualTo(base.get(1).path("understanding").path("extraction").path("extractor"));

        // the vector of a renamed text moved a little, of a text the copy kept not at all; all of unit length; the
        // memory vector, not computed, stays empty
        JsonNode vectors = understood.path("understanding").path("embeddings");
        JsonNode baseVectors = base.get(1).path("understanding").path("embeddings");
        assertThat(vectors.path("memory").asText()).isEmpty();
        assertThat(cosine(vectors.path("passage"), baseVectors.path("passage"))).isBetween(0.85, 0.995);
        int kept = 0;
        for (int i = 0; i < entities.size(); i++) {
            double c = cosine(
                    vectors.path("entities").get(i),
                    baseVectors.path("entities").get(i));
            if (copyExtraction
                    .entities()
                    .get(i)
                    .embeddingText()
                    .equals(baseExtraction.entities().get(i).embeddingText())) {
                assertThat(c).isCloseTo(1.0, within(1e-6));
                kept++;
            } else {
                assertThat(c).isBetween(0.85, 0.995);
            }
        }
        assertThat(kept).as("\"London\" is kept in every copy").isPositive();
        for (String list : List.of("facts", "questions")) {
            assertThat(vectors.path(list)).hasSameSizeAs(baseVectors.path(list)).isNotEmpty();
            for (int i = 0; i < vectors.path(list).size(); i++) {
                assertThat(cosine(
                                vectors.path(list).get(i),
                                baseVectors.path(list).get(i)))
                        .isBetween(0.85, 0.9999);
            }
        }
        // the same copy is made the same every time
        assertThat(replay.copy("doc", TEXT, 3)).isEqualTo(copy);
    }

    @Test
    void offsetsMoveWithTheRenamedWordsBeforeThem() {
        CopyNames names = new CopyNames(Set.of("Paris"));
        UnderstandingReplay replay = new UnderstandingReplay(Map.of(), names);
        String text = "In Paris, Babbage met Lovelace.";
        UnderstandingReplay.Renamed r = replay.renamed(text, 1);
        assertThat(r.text()).isEqualTo(names.rename(text, 1));
        int babbage = text.indexOf("Babbage");
        int lovelace = text.indexOf("Lovelace");
        assertThat(r.moved(0)).isZero();
        assertThat(r.moved(3)).isEqualTo(3); // a kept word does not move
        assertThat(r.text().substring(r.moved(babbage), r.moved(babbage + 7))).isEqualTo(names.rename("Babbage", 1));
        assertThat(r.text().substring(r.moved(lovelace), r.moved(lovelace + 8))).isEqualTo(names.rename("Lovelace", 1));
        assertThat(r.moved(text.length())).isEqualTo(r.text().length());
        assertThat(r.moved(babbage + 2)).as("inside a renamed word: its end").isEqualTo(r.moved(babbage + 7));
    }

    @Test
    void aDocumentNeverRecordedIsRefused() {
        UnderstandingReplay replay = new UnderstandingReplay(Map.of(), new CopyNames(Set.of()));
        assertThatThrownBy(() -> replay.copy("missing", "", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("missing");
    }

    private static byte[] bytes(JsonNode e) {
        try {
            return Json.mapper().writeValueAsBytes(e);
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    private static JsonNode tree(UnderstandingEvent e) {
        return Json.mapper().valueToTree(e);
    }

    private static float[] mean(float[] a, float[] b) {
        float[] m = new float[a.length];
        double n = 0;
        for (int i = 0; i < m.length; i++) {
            m[i] = a[i] + b[i];
            n += m[i] * m[i];
        }
        for (int i = 0; i < m.length; i++) {
            m[i] /= (float) Math.sqrt(n);
        }
        return m;
    }

    private static float[] unit(Random r) {
        float[] v = new float[384];
        double n = 0;
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) r.nextGaussian();
            n += v[i] * v[i];
        }
        for (int i = 0; i < v.length; i++) {
            v[i] /= (float) Math.sqrt(n);
        }
        return v;
    }

    private static double cosine(JsonNode a, JsonNode b) {
        float[] x = VectorCodec.fromBytes(Base64.getDecoder().decode(a.asText()));
        float[] y = VectorCodec.fromBytes(Base64.getDecoder().decode(b.asText()));
        double dot = 0;
        double nx = 0;
        double ny = 0;
        for (int i = 0; i < x.length; i++) {
            dot += x[i] * y[i];
            nx += x[i] * x[i];
            ny += y[i] * y[i];
        }
        assertThat(nx).isCloseTo(1.0, within(1e-4));
        return dot / Math.sqrt(nx * ny);
    }
}
