package dev.engram.understanding;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.understanding.llm.LlmException;

/**
 * Understands a passage in two parts: extraction (possibly expensive and cached by the caller) and embedding of the
 * passage, its memory, entities, facts and utility questions. Implementations are thread-safe.
 */
public interface Understander extends AutoCloseable {

    Extractor extractor();

    /** The embedder used for passages; queries must be embedded with the same one. */
    Embedder embedder();

    default Extraction extract(PassageEvent.Upsert passage) {
        return extractor().extract(passage);
    }

    Understanding embed(PassageEvent.Upsert passage, Extraction extraction);

    /** Whether understanding calls a remote model: the extractor's or the embedder's. */
    default boolean remote() {
        return extractor().remote() || embedder().remote();
    }

    /**
     * Whether {@code failure} may pass if tried again later: somewhere in its causes, an LLM call that got no answer, a
     * 429 or a 5xx. Anything else (a reply that is not usable, a 4xx) fails the same way again.
     */
    static boolean transientFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof LlmException e) {
                return e.retryable();
            }
        }
        return false;
    }

    default Understanding understand(PassageEvent.Upsert passage) {
        return embed(passage, extract(passage));
    }

    /** The text a passage is embedded from: its title, heading path and text. */
    static String embeddingText(PassageEvent.Upsert passage) {
        StringBuilder sb = new StringBuilder();
        if (!passage.title().isBlank()) {
            sb.append(passage.title()).append('\n');
        }
        for (String h : passage.headings()) {
            if (!h.isBlank()) {
                sb.append(h).append('\n');
            }
        }
        return sb.append(passage.text()).toString();
    }

    @Override
    void close();
}
