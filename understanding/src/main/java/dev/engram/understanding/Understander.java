package dev.engram.understanding;

import dev.engram.schemas.Conversation;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.understanding.llm.LlmException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

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

    /** The kinds of text a passage's understanding embeds, in the order they are embedded. */
    enum TextKind {
        PASSAGE,
        MEMORY,
        ENTITY,
        FACT,
        QUESTION
    }

    /**
     * The texts {@link #embed} embeds for a passage and its extraction, by kind: the passage (with its title and
     * headings), its memory when it differs from the passage text, each entity's "name: description", each fact's text
     * and each utility question.
     */
    default Map<TextKind, List<String>> textsToEmbed(PassageEvent.Upsert passage, Extraction extraction) {
        Map<TextKind, List<String>> texts = new EnumMap<>(TextKind.class);
        texts.put(TextKind.PASSAGE, List.of(embeddingText(passage)));
        texts.put(TextKind.MEMORY, separateMemory(passage, extraction) ? List.of(extraction.memory()) : List.of());
        texts.put(
                TextKind.ENTITY,
                extraction.entities().stream()
                        .map(Extraction.Entity::embeddingText)
                        .toList());
        texts.put(
                TextKind.FACT,
                extraction.facts().stream().map(Extraction.Fact::text).toList());
        texts.put(TextKind.QUESTION, List.copyOf(extraction.questions()));
        return texts;
    }

    /** Whether a passage's memory is a text of its own (else its vector is the passage's). */
    private static boolean separateMemory(PassageEvent.Upsert passage, Extraction extraction) {
        return !extraction.memory().equals(passage.text())
                && !extraction.memory().isBlank();
    }

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

    /** The text a passage is embedded from: its title, heading path and text; a turn's text after its speaker. */
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
        Conversation c = passage.conversation();
        if (c != null && !startsWithName(passage.text(), c.speaker())) {
            // a turn is embedded as it was said: by whom ("Caroline: I went …"), as its own text may not say
            sb.append(c.speaker()).append(": ");
        }
        return sb.append(passage.text()).toString();
    }

    /** Whether {@code text} opens with {@code name} as a whole word ("Jo: hi", not "Joanna called"). */
    private static boolean startsWithName(String text, String name) {
        return text.startsWith(name)
                && (text.length() == name.length() || !Character.isLetterOrDigit(text.charAt(name.length())));
    }

    @Override
    void close();
}
