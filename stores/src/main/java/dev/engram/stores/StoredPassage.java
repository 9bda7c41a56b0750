package dev.engram.stores;

import dev.engram.schemas.Extraction;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A passage in memory with what was extracted from it and the ids of the entities it links to (its vector is kept
 * apart, in the vectors store). {@code eventTime} is its document's; {@code session} the {@link
 * dev.engram.schemas.Conversation#sessionKey() session key} of a conversation's turn, else null. Both are null in
 * passages stored before they were kept.
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
        String embedder,
        Instant eventTime,
        String session) {
    public StoredPassage {
        headings = headings == null ? List.of() : List.copyOf(headings);
        entityIds = entityIds == null ? List.of() : List.copyOf(entityIds);
    }

    /** A passage of a document that is no conversation's turn, without an event time. */
    public StoredPassage(
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
        this(
                namespace,
                documentId,
                passageId,
                documentVersion,
                ordinal,
                contentHash,
                title,
                headings,
                text,
                start,
                end,
                extraction,
                entityIds,
                embedder,
                null,
                null);
    }

    public String memory() {
        return extraction.memory();
    }

    /**
     * The surface id of each extracted mention, by index (null for a name that normalizes to nothing), as memory
     * linked it: {@link #entityIds} mapped back onto the mentions. A passage's partition of its mentions into surfaces
     * depends only on name and type, so the i-th distinct surface in order of first mention is the i-th stored id —
     * even when the ids themselves were derived by an earlier version of {@link EntityNames#surfaceIds}. Readers use
     * this, never a fresh derivation, so that memory written before a change of the sense function stays linked.
     */
    public List<String> surfaceIdsByMention() {
        List<Extraction.Entity> mentions = extraction.entities();
        List<String> bare = new ArrayList<>(mentions.size());
        Map<String, Integer> order = new HashMap<>();
        for (Extraction.Entity m : mentions) {
            String id = EntityNames.normalize(m.name()).isEmpty()
                    ? null
                    : EntityNames.surfaceId(namespace, m.name(), m.type());
            bare.add(id);
            if (id != null) {
                order.putIfAbsent(id, order.size());
            }
        }
        if (order.size() != entityIds.size()) {
            return EntityNames.surfaceIds(namespace, mentions); // not linked by this partition: derive afresh
        }
        List<String> out = new ArrayList<>(mentions.size());
        for (String id : bare) {
            out.add(id == null ? null : entityIds.get(order.get(id)));
        }
        return out;
    }
}
