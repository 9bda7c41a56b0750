package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/** A versioned mutation of a namespace's memory graph, keyed by namespace. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = MemoryChange.PassageAdded.class, name = "passage_added"),
    @JsonSubTypes.Type(value = MemoryChange.PassageRemoved.class, name = "passage_removed"),
    @JsonSubTypes.Type(value = MemoryChange.EntityCreated.class, name = "entity_created"),
    @JsonSubTypes.Type(value = MemoryChange.EntityRemoved.class, name = "entity_removed"),
    @JsonSubTypes.Type(value = MemoryChange.LinkAdded.class, name = "link_added"),
    @JsonSubTypes.Type(value = MemoryChange.LinkRemoved.class, name = "link_removed"),
    @JsonSubTypes.Type(value = MemoryChange.DocumentStatusChanged.class, name = "document_status"),
    @JsonSubTypes.Type(value = MemoryChange.EntityDecision.class, name = "entity_decision")
})
public sealed interface MemoryChange {

    String namespace();

    long version();

    Instant at();

    /** The kinds of change, by the {@code type} name they are written under. */
    enum Type {
        PASSAGE_ADDED,
        PASSAGE_REMOVED,
        ENTITY_CREATED,
        ENTITY_REMOVED,
        LINK_ADDED,
        LINK_REMOVED,
        DOCUMENT_STATUS,
        ENTITY_DECISION;

        /** The kind of a change. */
        public static Type of(MemoryChange change) {
            return switch (change) {
                case PassageAdded c -> PASSAGE_ADDED;
                case PassageRemoved c -> PASSAGE_REMOVED;
                case EntityCreated c -> ENTITY_CREATED;
                case EntityRemoved c -> ENTITY_REMOVED;
                case LinkAdded c -> LINK_ADDED;
                case LinkRemoved c -> LINK_REMOVED;
                case DocumentStatusChanged c -> DOCUMENT_STATUS;
                case EntityDecision c -> ENTITY_DECISION;
            };
        }

        /** The {@code type} property of the change's JSON form. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    record PassageAdded(
            String namespace, long version, Instant at, String documentId, String passageId, String contentHash)
            implements MemoryChange {}

    record PassageRemoved(String namespace, long version, Instant at, String documentId, String passageId)
            implements MemoryChange {}

    record EntityCreated(
            String namespace, long version, Instant at, String entityId, String name, EntityType entityType)
            implements MemoryChange {}

    record EntityRemoved(String namespace, long version, Instant at, String entityId, String name)
            implements MemoryChange {}

    record LinkAdded(String namespace, long version, Instant at, String passageId, String entityId)
            implements MemoryChange {}

    record LinkRemoved(String namespace, long version, Instant at, String passageId, String entityId)
            implements MemoryChange {}

    record DocumentStatusChanged(
            String namespace, long version, Instant at, String documentId, long documentVersion, DocumentStatus status)
            implements MemoryChange {}

    /**
     * An entity-resolution decision about a surface entity: {@code update} (new aliases or description), {@code
     * merge} into {@code otherId} (the resolved entity), {@code unmerge} from {@code otherId}, {@code review} or {@code
     * defer} of the pair ({@code entityId}, {@code otherId}), or {@code cleared} when a pair decision no longer holds;
     * with the rule, its score in [0, 1] and the evidence, so that every merge can be audited and undone.
     */
    record EntityDecision(
            String namespace,
            long version,
            Instant at,
            Kind decision,
            String entityId,
            String otherId,
            String rule,
            double score,
            List<String> evidence)
            implements MemoryChange {

        /** What was decided (written by its lowercase name). */
        public enum Kind {
            /** New aliases or description. */
            @JsonProperty("update")
            UPDATE,
            /** The surface joined the resolved entity {@code otherId}. */
            @JsonProperty("merge")
            MERGE,
            /** The surface left the resolved entity {@code otherId}. */
            @JsonProperty("unmerge")
            UNMERGE,
            /** A person should look at the pair. */
            @JsonProperty("review")
            REVIEW,
            /** The pair waits for supporting evidence. */
            @JsonProperty("defer")
            DEFER,
            /** A pair decision no longer holds. */
            @JsonProperty("cleared")
            CLEARED,
            /** An operator keeps the pair apart. */
            @JsonProperty("split")
            SPLIT;

            /** The name in events and meters. */
            public String wireName() {
                return name().toLowerCase(Locale.ROOT);
            }
        }

        public EntityDecision {
            evidence = evidence == null ? List.of() : List.copyOf(evidence);
        }
    }
}
