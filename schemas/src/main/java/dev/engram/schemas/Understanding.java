package dev.engram.schemas;

import java.util.List;

/** What the understand step learned from one passage. */
public record Understanding(
        String memory, List<EntityMention> entities, float[] embedding, String extractor, String embedder) {

    public Understanding {
        entities = entities == null ? List.of() : List.copyOf(entities);
    }
}
