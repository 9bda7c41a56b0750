package dev.engram.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Every record Java writes must validate against the JSON Schema of its topic, and read back equal. */
class SchemaConformanceTest {

    private static final String PID = "0123456789abcdef0123456789abcdef";
    private static final String HASH = "ab".repeat(32);
    private static final Instant AT = Instant.parse("2026-01-02T03:04:05Z");

    private static final PassageEvent.Upsert UPSERT =
            new PassageEvent.Upsert("ns", "doc", 2, PID, 0, HASH, "Title", List.of("Intro"), "Text.", 0, 5, null, AT);
    private static final PassageEvent.Retraction RETRACTION =
            new PassageEvent.Retraction("ns", "doc", 3, PID, PassageEvent.Reason.DELETED);

    private static final Extraction EXTRACTION = new Extraction(
            "Ada Lovelace wrote Note G.",
            List.of(
                    new Extraction.Entity(
                            "Ada Lovelace",
                            EntityType.PERSON,
                            "mathematician",
                            List.of("Lovelace"),
                            List.of(new Span(0, 12))),
                    new Extraction.Entity("Note G", EntityType.WORK, "", List.of(), List.of(new Span(19, 25)))),
            List.of(
                    new Extraction.Fact("Ada Lovelace", "wrote", "Note G", new Span(0, 25), 0.9),
                    new Extraction.Fact("Ada Lovelace", "knew", "Note G", null, 0.5)),
            List.of(new Extraction.Relation("met", List.of("A", "B", "C"), null, 0.5)),
            List.of("Who wrote Note G?"),
            "embedded-rules/2",
            null,
            new Extraction.TokenUsage(10, 5, 0.0001));
    private static final Embeddings EMBEDDINGS = new Embeddings(
            new float[] {0.6f, 0.8f},
            new float[] {0.8f, 0.6f},
            List.of(new float[] {1, 0}, new float[] {0, 1}),
            List.of(new float[] {1, 0}, new float[] {0, 1}),
            List.of(new float[] {0.6f, 0.8f}));

    private static JsonNode tree(Object value) {
        return Json.mapper().valueToTree(value);
    }

    @Test
    void documentEventsMatchTheirSchema() {
        DocumentEvent full =
                new DocumentEvent("ns", "doc", DocumentEvent.Op.UPSERT, "T", "text", "src", Map.of("k", 1), AT);
        assertThat(Schemas.DOCUMENT_EVENT.validate(tree(full))).isEmpty();
        assertThat(Schemas.DOCUMENT_EVENT.validate(tree(DocumentEvent.delete("ns", "doc"))))
                .isEmpty();
    }

    @Test
    void passageEventsMatchTheirSchemaAndRoundTrip() {
        assertThat(Schemas.PASSAGE.validate(tree(UPSERT))).isEmpty();
        assertThat(Schemas.PASSAGE.validate(tree(RETRACTION))).isEmpty();
        PassageEvent back = Json.fromBytes(Json.toBytes(UPSERT), PassageEvent.class);
        assertThat(back).isEqualTo(UPSERT);

        PassageEvent.Upsert turn = new PassageEvent.Upsert(
                "ns",
                "doc",
                2,
                PID,
                0,
                HASH,
                "",
                List.of(),
                "I'm here.",
                0,
                9,
                null,
                AT,
                new Conversation("Ann", List.of("Ann", "Bob"), "s1"));
        assertThat(Schemas.PASSAGE.validate(tree(turn))).isEmpty();
        assertThat(Json.fromBytes(Json.toBytes(turn), PassageEvent.class)).isEqualTo(turn);
    }

    @Test
    void understandingEventsMatchTheirSchema() {
        Understanding u = new Understanding(EXTRACTION, EMBEDDINGS, "model");
        List<UnderstandingEvent> events = List.of(
                new UnderstandingEvent.Understood(UPSERT, u),
                new UnderstandingEvent.Retracted(RETRACTION),
                new UnderstandingEvent.Manifest(
                        "ns",
                        "doc",
                        2,
                        DocumentEvent.Op.UPSERT,
                        "T",
                        null,
                        Map.of(),
                        AT,
                        List.of(new UnderstandingEvent.PassageRef(PID, HASH)),
                        new EventPosition("documents", 3, 41),
                        List.of()),
                new UnderstandingEvent.Manifest(
                        "ns",
                        "doc",
                        3,
                        DocumentEvent.Op.DELETE,
                        "T",
                        null,
                        Map.of(),
                        null,
                        List.of(),
                        null,
                        List.of()));
        for (UnderstandingEvent e : events) {
            assertThat(Schemas.UNDERSTANDING.validate(tree(e))).as(e.toString()).isEmpty();
            UnderstandingEvent back = Json.fromBytes(Json.toBytes(e), UnderstandingEvent.class);
            assertThat(back.getClass()).isEqualTo(e.getClass());
            if (e instanceof UnderstandingEvent.Manifest m) {
                assertThat(back).isEqualTo(m);
            }
        }
    }

    @Test
    void aManifestWrittenBeforePositionsWereRecordedIsReadWithoutOne() throws Exception {
        String old = """
                {"kind":"manifest","namespace":"ns","document_id":"doc","document_version":1,"op":"upsert",
                 "title":"T","passages":[]}""";
        assertThat(Schemas.UNDERSTANDING.validate(Json.strictTrees().readTree(old)))
                .isEmpty();
        UnderstandingEvent.Manifest m =
                (UnderstandingEvent.Manifest) Json.fromBytes(old.getBytes(UTF_8), UnderstandingEvent.class);
        assertThat(m.input()).isNull();
        String bad = old.replace(
                "\"passages\"", "\"input\":{\"topic\":\"documents\",\"partition\":-1,\"offset\":0},\"passages\"");
        assertThat(Schemas.UNDERSTANDING.validate(Json.strictTrees().readTree(bad)))
                .isNotEmpty();
    }

    @Test
    void extractionsMatchTheirSchemaAndVectorsRoundTripExactly() {
        assertThat(Schemas.EXTRACTION.validate(tree(EXTRACTION))).isEmpty();
        assertThat(Json.fromBytes(Json.toBytes(EXTRACTION), Extraction.class)).isEqualTo(EXTRACTION);
        Understanding u = new Understanding(EXTRACTION, EMBEDDINGS, "model");
        Understanding back = Json.fromBytes(Json.toBytes(u), Understanding.class);
        assertThat(back.embeddings().passage()).containsExactly(0.6f, 0.8f);
        assertThat(back.embeddings().facts().get(1)).containsExactly(0f, 1f);
        assertThat(Json.toString(u)).contains("\"passage\":\"");
    }

    @Test
    void memoryChangesMatchTheirSchema() {
        List<MemoryChange> changes = List.of(
                new MemoryChange.PassageAdded("ns", 1, AT, "doc", PID, HASH),
                new MemoryChange.PassageRemoved("ns", 2, AT, "doc", PID),
                new MemoryChange.EntityCreated("ns", 3, AT, PID, "Ada", EntityType.PERSON),
                new MemoryChange.EntityRemoved("ns", 4, AT, PID, "Ada"),
                new MemoryChange.LinkAdded("ns", 5, AT, PID, PID),
                new MemoryChange.LinkRemoved("ns", 6, AT, PID, PID),
                new MemoryChange.DocumentStatusChanged("ns", 7, AT, "doc", 1, DocumentStatus.VERIFIED),
                new MemoryChange.EntityDecision(
                        "ns",
                        8,
                        AT,
                        MemoryChange.EntityDecision.Kind.MERGE,
                        PID,
                        PID,
                        "acronym",
                        0.9,
                        List.of("initials match")),
                new MemoryChange.EntityDecision(
                        "ns", 9, AT, MemoryChange.EntityDecision.Kind.UPDATE, PID, null, "aliases", 1, List.of()));
        for (MemoryChange c : changes) {
            assertThat(Schemas.MEMORY_CHANGE.validate(tree(c))).as(c.toString()).isEmpty();
            assertThat(Json.fromBytes(Json.toBytes(c), MemoryChange.class)).isEqualTo(c);
            assertThat(tree(c).get("type").asText())
                    .isEqualTo(MemoryChange.Type.of(c).wireName());
        }
        assertThat(changes.stream().map(MemoryChange.Type::of).distinct())
                .containsExactlyInAnyOrder(MemoryChange.Type.values());
    }

    @Test
    void everyDecisionKindIsWrittenUnderItsWireNameAndMatchesTheSchema() {
        for (MemoryChange.EntityDecision.Kind kind : MemoryChange.EntityDecision.Kind.values()) {
            MemoryChange c = new MemoryChange.EntityDecision("ns", 1, AT, kind, PID, PID, "rule", 1, List.of());
            assertThat(Schemas.MEMORY_CHANGE.validate(tree(c)))
                    .as(kind.toString())
                    .isEmpty();
            assertThat(tree(c).get("decision").asText()).isEqualTo(kind.wireName());
            assertThat(Json.fromBytes(Json.toBytes(c), MemoryChange.class)).isEqualTo(c);
        }
    }

    @Test
    void memoryCommandsMatchTheirSchema() {
        MemoryCommand c = new MemoryCommand("ns", MemoryCommand.Op.SPLIT, PID, PID, "two different people", AT);
        assertThat(Schemas.MEMORY_COMMAND.validate(tree(c))).isEmpty();
        assertThat(Json.fromBytes(Json.toBytes(c), MemoryCommand.class)).isEqualTo(c);
    }

    /** One mirror record of every kind, and a delete. */
    static List<MirrorRecord> mirrorRecordsOfEveryKind() {
        float[] v = {0.6f, 0.8f};
        return List.of(
                MirrorRecord.upsert(
                        "ns",
                        "doc",
                        4,
                        AT,
                        new MirrorRecord.Document(
                                "T'}) DETACH DELETE n //", null, DocumentStatus.VERIFIED, 2, AT, 3, 3)),
                MirrorRecord.upsert(
                        "ns",
                        PID,
                        5,
                        AT,
                        new MirrorRecord.Passage(
                                "doc", 2, 0, "T", List.of("H"), "Text.", "Memory.", 0, 5, HASH, "x/1", "m", v, v)),
                MirrorRecord.upsert(
                        "ns",
                        "e1",
                        6,
                        AT,
                        new MirrorRecord.Entity(
                                "Ada", EntityType.PERSON, "", List.of("ada"), List.of("Ada"), "e0", 2, 1, null)),
                MirrorRecord.upsert(
                        "ns",
                        PID + "|e1",
                        6,
                        AT,
                        new MirrorRecord.Mention(
                                PID, "e1", "doc", "Ada", "", List.of(new Span(0, 3)), List.of("Ada"), "x/1")),
                MirrorRecord.upsert(
                        "ns",
                        PID + "/f/0",
                        6,
                        AT,
                        new MirrorRecord.Fact(PID, "doc", "e1", "wrote", "e2", "Ada", "Note G", "Ada wrote", 0.9, v)),
                MirrorRecord.upsert(
                        "ns", PID + "/q/0", 6, AT, new MirrorRecord.Question(PID, "doc", "Who wrote Note G?", v)),
                MirrorRecord.upsert("ns", "0", 7, AT, new MirrorRecord.Theme(0, 0.1, List.of(PID), "summary")),
                MirrorRecord.delete("ns", MirrorRecord.Kind.FACT, PID + "/f/1", 8, AT)
                        .asRepair());
    }

    @Test
    void mirrorRecordsOfEveryKindMatchTheirSchema() {
        List<MirrorRecord> records = mirrorRecordsOfEveryKind();
        for (MirrorRecord r : records) {
            assertThat(Schemas.MIRROR.validate(tree(r))).as(r.kind().wireName()).isEmpty();
            MirrorRecord back = Json.fromBytes(Json.toBytes(r), MirrorRecord.class);
            assertThat(tree(back)).isEqualTo(tree(r));
            // what the sink reads: every field Engram writes, bound strictly
            assertThat(tree(bound(tree(r), MirrorRecord.class))).isEqualTo(tree(r));
        }
    }

    private static <T> T bound(JsonNode tree, Class<T> type) {
        try {
            return Json.bindInternal(tree, type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The sink binds mirror records strictly instead of validating them: what the schema refuses of a record's fields
     * the binding refuses too — a field unknown, missing or of another type, a count as text or with a fraction, a
     * negative version, an empty id, an object of another kind.
     */
    @Test
    void strictBindingRefusesWhatTheMirrorSchemaRefuses() {
        ObjectNode fact = (ObjectNode) tree(mirrorRecordsOfEveryKind().stream()
                .filter(r -> r.kind() == MirrorRecord.Kind.FACT && !r.deleted())
                .findFirst()
                .orElseThrow());
        for (Consumer<ObjectNode> m : List.<Consumer<ObjectNode>>of(
                n -> n.putNull("head_id"),
                n -> n.putNull("relation"),
                n -> n.put("confidence", 1.5),
                n -> n.put("confidence", -0.1))) {
            ObjectNode mutant = fact.deepCopy();
            m.accept((ObjectNode) mutant.get("object"));
            assertThat(Schemas.MIRROR.validate(mutant))
                    .as("the schema: %s", mutant)
                    .isNotEmpty();
            assertThatThrownBy(() -> Json.bindInternal(mutant, MirrorRecord.class))
                    .as("%s", mutant)
                    .isInstanceOfAny(IOException.class, IllegalArgumentException.class);
        }
        ObjectNode passage = (ObjectNode) tree(mirrorRecordsOfEveryKind().stream()
                .filter(r -> r.kind() == MirrorRecord.Kind.PASSAGE)
                .findFirst()
                .orElseThrow());
        List<Consumer<ObjectNode>> mutations = List.of(
                n -> n.put("extra", 1),
                n -> n.remove("at"),
                n -> n.remove("repair"),
                n -> n.put("version", "7"),
                n -> n.put("version", 7.5),
                n -> n.put("version", -1),
                n -> n.put("repair", "true"),
                n -> n.put("id", ""),
                n -> n.put("namespace", 5),
                n -> n.put("kind", "fact"),
                n -> n.put("kind", "nonsense"),
                n -> n.put("at", "yesterday"),
                n -> n.put("object", "a string"),
                n -> ((ObjectNode) n.get("object")).put("unknown", true),
                n -> ((ObjectNode) n.get("object")).remove("text"),
                n -> ((ObjectNode) n.get("object")).put("vector", 12),
                n -> n.putNull("at"),
                n -> ((ObjectNode) n.get("object")).putNull("document_id"),
                n -> ((ObjectNode) n.get("object")).putNull("text"),
                n -> ((ObjectNode) n.get("object")).putNull("content_hash"),
                n -> ((ObjectNode) n.get("object")).put("ordinal", -1));
        for (int i = 0; i < mutations.size(); i++) {
            ObjectNode mutant = passage.deepCopy();
            mutations.get(i).accept(mutant);
            assertThat(Schemas.MIRROR.validate(mutant))
                    .as("mutation %d: the schema", i)
                    .isNotEmpty();
            assertThatThrownBy(() -> Json.bindInternal(mutant, MirrorRecord.class))
                    .as("mutation %d: %s", i, mutant)
                    .isInstanceOfAny(IOException.class, IllegalArgumentException.class, NullPointerException.class);
        }
    }

    @Test
    void aMirrorRecordOfOneKindCannotCarryAnotherKindsObject() {
        assertThatThrownBy(() -> new MirrorRecord(
                        "ns", MirrorRecord.Kind.FACT, "x", 1, AT, false, new MirrorRecord.Theme(0, 0, List.of(), "")))
                .isInstanceOf(IllegalArgumentException.class);
        // nor on the wire: the record's kind picks the object's schema
        ObjectNode theme = (ObjectNode)
                tree(MirrorRecord.upsert("ns", "0", 7, AT, new MirrorRecord.Theme(0, 0.1, List.of(PID), "summary")));
        assertThat(Schemas.MIRROR.validate(theme)).isEmpty();
        theme.put("kind", "fact");
        assertThat(Schemas.MIRROR.validate(theme)).isNotEmpty();
        theme.put("kind", "theme");
        ((ObjectNode) theme.get("object")).remove("summary");
        assertThat(Schemas.MIRROR.validate(theme))
                .as("the theme schema still applies")
                .isNotEmpty();
        theme.putNull("object");
        assertThat(Schemas.MIRROR.validate(theme)).as("a delete of any kind").isEmpty();
        theme.put("object", "a string");
        assertThat(Schemas.MIRROR.validate(theme)).isNotEmpty();
    }

    /** A compensation of a passage's vector. */
    static Compensation compensation() {
        return new Compensation(
                "ns",
                3,
                Compensation.Sink.QDRANT,
                MirrorRecord.Kind.PASSAGE,
                "upsert",
                PID,
                Compensation.Outcome.COMPENSATED,
                "wrong dimension",
                3,
                AT);
    }

    @Test
    void compensationsAndDeadLettersMatchTheirSchemas() {
        Compensation c = compensation();
        DeadLetter d = new DeadLetter(
                DeadLetter.Stage.READ,
                DeadLetter.Cause.MALFORMED_JSON,
                "malformed JSON: x",
                "t",
                0,
                42,
                null,
                "e30=",
                2L,
                "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
                false,
                AT);
        assertThat(Schemas.COMPENSATION.validate(tree(c))).isEmpty();
        assertThat(Schemas.DEAD_LETTER.validate(tree(d))).isEmpty();
        assertThat(Json.fromBytes(Json.toBytes(d), DeadLetter.class)).isEqualTo(d);
    }

    @Test
    void everyDeadLetterCauseIsWrittenUnderItsWireNameAndMatchesTheSchema() {
        for (DeadLetter.Cause cause : DeadLetter.Cause.values()) {
            for (DeadLetter.Stage stage : cause.stages()) {
                DeadLetter d = new DeadLetter(stage, cause, "why", "t", 0, 1, null, null, null, null, false, AT);
                assertThat(Schemas.DEAD_LETTER.validate(tree(d)))
                        .as(cause.toString())
                        .isEmpty();
                assertThat(tree(d).get("cause").asText()).isEqualTo(cause.wireName());
                assertThat(tree(d).get("stage").asText()).isEqualTo(stage.wireName());
                assertThat(Json.fromBytes(Json.toBytes(d), DeadLetter.class)).isEqualTo(d);
            }
        }
        JsonNode unknown = ((ObjectNode) tree(new DeadLetter(
                        DeadLetter.Stage.READ,
                        DeadLetter.Cause.SCHEMA,
                        "why",
                        "t",
                        0,
                        1,
                        null,
                        null,
                        null,
                        null,
                        false,
                        AT)))
                .put("cause", "nope");
        assertThat(Schemas.DEAD_LETTER.validate(unknown)).isNotEmpty();
    }

    @Test
    void schemasRejectWhatTheyShould() {
        JsonNode bad = Json.mapper().createObjectNode().put("op", "upsert").put("namespace", "ns");
        assertThat(Schemas.PASSAGE.validate(bad)).isNotEmpty();
        assertThat(Schemas.MEMORY_CHANGE.validate(
                        Json.mapper().createObjectNode().put("type", "nope")))
                .isNotEmpty();
    }

    @Test
    void aDeadLetterOfAHugeRecordKeepsAPrefixItsLengthAndDigestAndStaysSmall() throws Exception {
        byte[] value = new byte[8 << 20];
        Arrays.fill(value, (byte) 'x');
        byte[] key = new byte[100_000];
        Arrays.fill(key, (byte) 'k');

        DeadLetter d = DeadLetter.of(
                DeadLetter.Stage.READ, DeadLetter.Cause.TOO_LARGE, "r".repeat(100_000), "t", 0, 1, key, value, AT);

        assertThat(d.truncated()).isTrue();
        assertThat(d.valueBytes()).isEqualTo(8L << 20);
        assertThat(d.valueSha256())
                .isEqualTo(HexFormat.of()
                        .formatHex(MessageDigest.getInstance("SHA-256").digest(value)));
        assertThat(Base64.getDecoder().decode(d.valueBase64())).hasSize(DeadLetter.MAX_VALUE_BYTES);
        assertThat(Base64.getDecoder().decode(d.keyBase64())).hasSize(DeadLetter.MAX_KEY_BYTES);
        assertThat(d.reason()).hasSize(DeadLetter.MAX_REASON_CHARS);
        assertThat(Json.toBytes(d).length).isLessThan(512 * 1024);
        assertThat(Schemas.DEAD_LETTER.validate(tree(d))).isEmpty();

        DeadLetter small = DeadLetter.of(
                DeadLetter.Stage.READ, DeadLetter.Cause.SCHEMA, "why", "t", 0, 1, null, "{}".getBytes(UTF_8), AT);
        assertThat(small.truncated()).isFalse();
        assertThat(small.valueBase64()).isEqualTo("e30=");
        assertThat(small.keyBase64()).isNull();
        assertThat(small.valueBytes()).isEqualTo(2);
    }

    @Test
    void aDeadLetterKeepsKeysAndValuesUpToTheirLimitWholeAndCutsOneByteMore() {
        byte[] keyAt = new byte[DeadLetter.MAX_KEY_BYTES];
        byte[] valueAt = new byte[DeadLetter.MAX_VALUE_BYTES];
        DeadLetter whole =
                DeadLetter.of(DeadLetter.Stage.READ, DeadLetter.Cause.SCHEMA, "r", "t", 0, 1, keyAt, valueAt, AT);
        assertThat(whole.truncated()).isFalse();
        assertThat(Base64.getDecoder().decode(whole.valueBase64())).hasSize(DeadLetter.MAX_VALUE_BYTES);
        assertThat(DeadLetter.boundedKey(keyAt)).isSameAs(keyAt);

        DeadLetter valueCut = DeadLetter.of(
                DeadLetter.Stage.READ,
                DeadLetter.Cause.SCHEMA,
                "r",
                "t",
                0,
                1,
                keyAt,
                new byte[DeadLetter.MAX_VALUE_BYTES + 1],
                AT);
        assertThat(valueCut.truncated()).isTrue();
        assertThat(valueCut.valueBytes()).isEqualTo(DeadLetter.MAX_VALUE_BYTES + 1L);

        byte[] keyPast = new byte[DeadLetter.MAX_KEY_BYTES + 1];
        DeadLetter keyCut =
                DeadLetter.of(DeadLetter.Stage.READ, DeadLetter.Cause.SCHEMA, "r", "t", 0, 1, keyPast, null, AT);
        assertThat(keyCut.truncated()).isTrue();
        assertThat(keyCut.valueBytes()).isNull();
        assertThat(DeadLetter.boundedKey(keyPast)).hasSize(DeadLetter.MAX_KEY_BYTES);
        assertThat(DeadLetter.boundedKey(null)).isNull();
    }
}
