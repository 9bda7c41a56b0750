package dev.engram.understanding;

import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;

/** Understands one passage: its memory, entities and embedding. Implementations are thread-safe. */
public interface Understander extends AutoCloseable {

    /** Name and version of the extractor, recorded with each understanding. */
    String extractor();

    /** The embedder used for passages; queries must be embedded with the same one. */
    Embedder embedder();

    Understanding understand(PassageEvent.Upsert passage);

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
