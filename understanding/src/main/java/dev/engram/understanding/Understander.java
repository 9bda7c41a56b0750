package dev.engram.understanding;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;

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
