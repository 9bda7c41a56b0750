package dev.engram.stores;

import dev.engram.schemas.Extraction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
