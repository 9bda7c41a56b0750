package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.time.Instant;

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
            String decision,
            String entityId,
            String otherId,
            String rule,
            double score,
            java.util.List<String> evidence)
            implements MemoryChange {
        public EntityDecision {
            evidence = evidence == null ? java.util.List.of() : java.util.List.copyOf(evidence);
        }
    }
}
