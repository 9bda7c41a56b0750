package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The state of one memory object after a memory update, for the mirrors (Neo4j, Qdrant) to write from the event alone:
 * an upsert carries the whole object with its vectors, a delete only its kind and id. Keyed by namespace, so the
 * records of a namespace arrive in the order memory changed.
 *
 * <p>{@code version} is the namespace's memory version when the object last changed: a mirror applies a record only
 * when it holds no newer version of that object (and deletes only what is not newer than the delete). {@code repair}
 * marks a record re-emitted to converge a mirror (after a compensation, or by the consistency repair); such records
 * carry the object's unchanged version.
 */
public record MirrorRecord(
        String namespace, Kind kind, String id, long version, Instant at, boolean repair, MirrorObject object) {

    public MirrorRecord {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(id, "id");
        if (namespace.isEmpty() || id.isEmpty()) {
            throw new IllegalArgumentException("a mirror record names its namespace and id");
        }
        Objects.requireNonNull(at, "at");
        if (version < 0) {
            throw new IllegalArgumentException("version " + version + " is negative");
        }
        if (object != null && kind != Kind.of(object)) {
            throw new IllegalArgumentException("a " + kind.wireName() + " record carries a " + Kind.of(object));
        }
    }

    /** An upsert: the object's whole state at {@code version}. */
    public static MirrorRecord upsert(String namespace, String id, long version, Instant at, MirrorObject object) {
        return new MirrorRecord(namespace, Kind.of(object), id, version, at, false, object);
    }

    /** A delete of the object {@code kind}/{@code id}, applied where the mirror holds a version not above this one. */
    public static MirrorRecord delete(String namespace, Kind kind, String id, long version, Instant at) {
        return new MirrorRecord(namespace, kind, id, version, at, false, null);
    }

    /** The same record, re-emitted to converge a mirror. */
    public MirrorRecord asRepair() {
        return new MirrorRecord(namespace, kind, id, version, at, true, object);
    }

    @JsonIgnore
    public boolean deleted() {
        return object == null;
    }

    /** The vectors of the object, by the kind of vector (one Qdrant collection each); empty for a delete. */
    public Map<VectorKind, float[]> vectors() {
        Map<VectorKind, float[]> out = new EnumMap<>(VectorKind.class);
        switch (object) {
            case null -> {}
            case Passage p -> {
                put(out, VectorKind.PASSAGE, p.vector());
                put(out, VectorKind.MEMORY, p.memoryVector());
            }
            case Entity e -> put(out, VectorKind.ENTITY, e.vector());
            case Fact f -> put(out, VectorKind.FACT, f.vector());
            case Question q -> put(out, VectorKind.QUESTION, q.vector());
            case Document d -> {}
            case Mention m -> {}
            case Theme t -> {}
        }
        return out;
    }

    private static void put(Map<VectorKind, float[]> out, VectorKind kind, float[] vector) {
        if (vector != null && vector.length > 0) {
            out.put(kind, vector);
        }
    }

    /** The kinds of vector a mirror keeps, one collection each, and the object kind they belong to. */
    public enum VectorKind {
        PASSAGE(Kind.PASSAGE),
        MEMORY(Kind.PASSAGE),
        ENTITY(Kind.ENTITY),
        FACT(Kind.FACT),
        QUESTION(Kind.QUESTION);

        private final Kind owner;

        VectorKind(Kind owner) {
            this.owner = owner;
        }

        /** The kind of object this vector belongs to. */
        public Kind owner() {
            return owner;
        }

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The bit of this kind in a set of vector kinds. */
        public int bit() {
            return 1 << ordinal();
        }

        /** The vector kinds an object of {@code kind} may have. */
        public static List<VectorKind> of(Kind kind) {
            return Arrays.stream(values()).filter(v -> v.owner == kind).toList();
        }
    }

    /** The kinds of memory object, by the name they are written under. */
    public enum Kind {
        @JsonProperty("document")
        DOCUMENT,
        @JsonProperty("passage")
        PASSAGE,
        @JsonProperty("entity")
        ENTITY,
        @JsonProperty("mention")
        MENTION,
        @JsonProperty("fact")
        FACT,
        @JsonProperty("question")
        QUESTION,
        @JsonProperty("theme")
        THEME;

        public static Kind of(MirrorObject object) {
            return switch (object) {
                case Document d -> DOCUMENT;
                case Passage p -> PASSAGE;
                case Entity e -> ENTITY;
                case Mention m -> MENTION;
                case Fact f -> FACT;
                case Question q -> QUESTION;
                case Theme t -> THEME;
            };
        }

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The state of a memory object, by kind. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = Document.class, name = "document"),
        @JsonSubTypes.Type(value = Passage.class, name = "passage"),
        @JsonSubTypes.Type(value = Entity.class, name = "entity"),
        @JsonSubTypes.Type(value = Mention.class, name = "mention"),
        @JsonSubTypes.Type(value = Fact.class, name = "fact"),
        @JsonSubTypes.Type(value = Question.class, name = "question"),
        @JsonSubTypes.Type(value = Theme.class, name = "theme")
    })
    public sealed interface MirrorObject {}

    /** A document: its latest manifest's title and source, its status and how many of its passages are in memory. */
    public record Document(
            String title,
            String source,
            DocumentStatus status,
            long documentVersion,
            Instant eventTime,
            int passages,
            int present)
            implements MirrorObject {
        public Document {
            required(status, "status");
            atLeastZero(passages, "passages");
        }
    }

    /** A passage with its memory (the self-contained restatement) and the vectors of both. */
    public record Passage(
            String documentId,
            long documentVersion,
            int ordinal,
            String title,
            List<String> headings,
            String text,
            String memory,
            int start,
            int end,
            String contentHash,
            String extractor,
            String embedder,

            @JsonSerialize(using = VectorCodec.Serializer.class)
            @JsonDeserialize(using = VectorCodec.Deserializer.class)
            float[] vector,

            @JsonSerialize(using = VectorCodec.Serializer.class)
            @JsonDeserialize(using = VectorCodec.Deserializer.class)
            float[] memoryVector)
            implements MirrorObject {
        public Passage {
            required(documentId, "document_id");
            required(text, "text");
            required(contentHash, "content_hash");
            atLeastZero(ordinal, "ordinal");
            headings = headings == null ? List.of() : List.copyOf(headings);
        }
    }

    /**
     * A surface entity (one name and type class) with its resolved entity ({@code resolvedId}, itself when not merged),
     * the written forms of its name, its aliases and the vector of its representative "name: description".
     */
    public record Entity(
            String name,
            EntityType type,
            String description,
            List<String> aliases,
            List<String> forms,
            String resolvedId,
            int mentions,
            int passages,

            @JsonSerialize(using = VectorCodec.Serializer.class)
            @JsonDeserialize(using = VectorCodec.Deserializer.class)
            float[] vector)
            implements MirrorObject {
        public Entity {
            required(name, "name");
            required(type, "type");
            required(description, "description");
            required(resolvedId, "resolved_id");
            atLeastZero(mentions, "mentions");
            atLeastZero(passages, "passages");
            aliases = aliases == null ? List.of() : List.copyOf(aliases);
            forms = forms == null ? List.of() : List.copyOf(forms);
        }
    }

    /** A passage mentioning a surface entity, with the written form and the evidence (spans and their text). */
    public record Mention(
            String passageId,
            String entityId,
            String documentId,
            String form,
            String description,
            List<Span> spans,
            List<String> evidence,
            String extractor)
            implements MirrorObject {
        public Mention {
            required(passageId, "passage_id");
            required(entityId, "entity_id");
            required(description, "description");
            spans = spans == null ? List.of() : List.copyOf(spans);
            evidence = evidence == null ? List.of() : List.copyOf(evidence);
        }
    }

    /** A fact of a passage between two of its surface entities, with its evidence and confidence. */
    public record Fact(
            String passageId,
            String documentId,
            String headId,
            String relation,
            String tailId,
            String head,
            String tail,
            String evidence,
            double confidence,

            @JsonSerialize(using = VectorCodec.Serializer.class)
            @JsonDeserialize(using = VectorCodec.Deserializer.class)
            float[] vector)
            implements MirrorObject {
        public Fact {
            required(passageId, "passage_id");
            required(headId, "head_id");
            required(relation, "relation");
            required(tailId, "tail_id");
            required(head, "head");
            required(tail, "tail");
            if (!(confidence >= 0 && confidence <= 1)) {
                throw new IllegalArgumentException("confidence " + confidence + " is not within [0, 1]");
            }
        }
    }

    /** A utility question of a passage (GEM-RAG), with its vector. */
    public record Question(
            String passageId,
            String documentId,
            String text,

            @JsonSerialize(using = VectorCodec.Serializer.class)
            @JsonDeserialize(using = VectorCodec.Deserializer.class)
            float[] vector)
            implements MirrorObject {
        public Question {
            required(passageId, "passage_id");
            required(text, "text");
        }
    }

    /** An eigen-theme of the namespace over its strongest passages. */
    public record Theme(int rank, double eigenvalue, List<String> passageIds, String summary) implements MirrorObject {
        public Theme {
            atLeastZero(rank, "rank");
            passageIds = passageIds == null ? List.of() : List.copyOf(passageIds);
        }
    }

    /** A field the mirror schema requires, as the record is built (from the topic or by Engram). */
    private static <T> T required(T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException("'" + field + "' is required");
        }
        return value;
    }

    private static void atLeastZero(long value, String field) {
        if (value < 0) {
            throw new IllegalArgumentException("'" + field + "' is negative: " + value);
        }
    }
}
