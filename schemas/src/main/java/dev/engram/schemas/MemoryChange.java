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
    @JsonSubTypes.Type(value = MemoryChange.DocumentStatusChanged.class, name = "document_status")
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
}
