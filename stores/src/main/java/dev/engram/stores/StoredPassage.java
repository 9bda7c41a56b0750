package dev.engram.stores;

import dev.engram.schemas.EntityMention;
import java.util.List;

/** A passage in memory with its understanding (the vector is kept apart, in the vectors store). */
public record StoredPassage(
        String namespace,
        String documentId,
        String passageId,
        long documentVersion,
        int ordinal,
        String contentHash,
        String title,
        List<String> headings,
        String text,
        int start,
        int end,
        String memory,
        List<EntityMention> mentions,
        List<String> entityIds,
        String extractor,
        String embedder) {
    public StoredPassage {
        headings = headings == null ? List.of() : List.copyOf(headings);
        mentions = mentions == null ? List.of() : List.copyOf(mentions);
        entityIds = entityIds == null ? List.of() : List.copyOf(entityIds);
    }
}
