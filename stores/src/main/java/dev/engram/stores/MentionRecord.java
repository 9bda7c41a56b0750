package dev.engram.stores;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Span;
import java.time.Instant;
import java.util.List;

/**
 * The link between a surface entity and one passage that mentions it, with its provenance: the written form, type,
 * description and aliases the extractor gave (normalized, as resolution compares them, and as written, as they are
 * shown), the evidence spans in the passage text, the document, the extractor
 * version and the operation that linked it ({@code create} for the surface's first mention, {@code update} after).
 * {@code session} is the {@link dev.engram.schemas.Conversation#sessionKey() session key} of a conversation's turn,
 * else null (and null in mentions stored before it was kept).
 */
public record MentionRecord(
        int mentions,
        String form,
        EntityType type,
        String description,
        List<String> aliases,
        List<Span> spans,
        String documentId,
        String extractor,
        String operation,
        Instant at,
        List<String> aliasForms,
        String session) {

    public MentionRecord {
        description = description == null ? "" : description;
        aliases = aliases == null ? List.of() : List.copyOf(aliases);
        aliasForms = aliasForms == null ? List.of() : List.copyOf(aliasForms);
        spans = spans == null ? List.of() : List.copyOf(spans);
    }
}
