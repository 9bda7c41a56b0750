package dev.engram.understanding;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;

/** Reads a passage into an {@link Extraction}. Implementations are thread-safe. */
public interface Extractor {

    /** Name and version, e.g. {@code embedded-rules/2}; part of the extraction cache key. */
    String id();

    /**
     * The id of the extractions it makes for a namespace's passages (part of their cache key): {@link #id()} unless
     * what it extracts depends on the namespace.
     */
    default String id(String namespace) {
        return id();
    }

    /** Whether extractions are worth caching (they cost money or time to redo). */
    boolean cacheable();

    /**
     * Whether extraction calls a remote service (slow, may fail transiently); the stream then extracts off its
     * threads, outside its transactions.
     */
    default boolean remote() {
        return false;
    }

    /**
     * Extracts from one passage.
     *
     * @throws ExtractionException when the passage cannot be extracted (the step dead-letters it with the reason)
     */
    Extraction extract(PassageEvent.Upsert passage);
}
