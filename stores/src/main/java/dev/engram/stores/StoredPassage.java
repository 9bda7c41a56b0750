package dev.engram.stores;

import dev.engram.schemas.Extraction;
import java.util.List;

/**
 * A passage in memory with what was extracted from it and the ids of the entities it links to (its vector is kept
 * apart, in the vectors store).
 */
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
        Extraction extraction,
        List<String> entityIds,
        String embedder) {
    public StoredPassage {
        headings = headings == null ? List.of() : List.copyOf(headings);
        entityIds = entityIds == null ? List.of() : List.copyOf(entityIds);
    }

    public String memory() {
        return extraction.memory();
    }
}
