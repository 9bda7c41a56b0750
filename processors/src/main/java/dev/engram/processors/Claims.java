package dev.engram.processors;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.stores.BlockKeys;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.ReviewItem;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * The construction agent's claims about memory beyond its passage ({@link Extraction.Construction}), once the record's
 * entities are resolved: a claim that two entities are one stands when resolution grouped them, and otherwise becomes
 * a review item, with the agent's reason — the rules, not the agent, decide merges. A request to delete an element of
 * memory (which keeps exactly what its documents support) and an explicit request for review are review items too.
 * They are the passage's: they leave with it, and come again when it is understood again.
 */
final class Claims {

    /** Review items of the agent's, next to the verifier's rejections under the passage's key. */
    static final String KEY_PREFIX = "agent-";

    private static final int BLOCK_LIMIT = 64;

    private Claims() {}

    static void review(MemoryTransaction tx, PassageEvent.Upsert p, Extraction extraction) {
        Extraction.Construction c = extraction.construction();
        if (c == null || c.claims().isEmpty()) {
            return;
        }
        int n = 0;
        for (Extraction.Claim claim : c.claims()) {
            String kind = "agent_" + claim.kind();
            String subject = claim.subject();
            String reason = claim.reason();
            if (Extraction.Claim.SAME_AS.equals(claim.kind())) {
                Set<String> a = resolved(tx, claim.subject());
                Set<String> b = resolved(tx, claim.other());
                if (a.stream().anyMatch(b::contains)) {
                    continue; // resolution bears it out
                }
                subject = claim.subject() + " = " + claim.other();
                reason = (a.isEmpty() || b.isEmpty()
                                ? "memory holds no entity named " + (a.isEmpty() ? claim.subject() : claim.other())
                                : "entity resolution keeps them apart")
                        + (reason.isEmpty() ? "" : "; the agent's reason: " + reason);
            }
            tx.reviews()
                    .put(
                            Keys.of(
                                    p.namespace(),
                                    p.passageId(),
                                    String.format(Locale.ROOT, "%s%05d", KEY_PREFIX, n++)),
                            new ReviewItem(
                                    p.namespace(),
                                    p.passageId(),
                                    p.documentId(),
                                    kind,
                                    subject,
                                    reason,
                                    extraction.extractor(),
                                    tx.now()));
        }
    }

    /**
     * The resolved entities named so: surfaces whose own name is the name (up to case, punctuation and articles).
     * Surfaces that only declare it as an alias do not count: an alias the agent wrote must not bear out its own claim.
     */
    static Set<String> resolved(MemoryTransaction tx, String name) {
        Set<String> out = new TreeSet<>();
        String normalized = EntityNames.normalize(name);
        if (normalized.isEmpty()) {
            return out;
        }
        String loose = EntityNames.loose(normalized);
        for (String key : List.of(BlockKeys.name(normalized), BlockKeys.loose(loose))) {
            int seen = 0;
            try (KeyValueIterator<String, String> it = tx.index().prefixScan(Keys.prefix(tx.namespace(), key))) {
                while (it.hasNext() && seen++ < BLOCK_LIMIT) {
                    EntityRecord e = tx.entities().get(Keys.of(tx.namespace(), Keys.last(it.next().key)));
                    if (e != null && EntityNames.loose(e.normalized()).equals(loose)) {
                        out.add(e.canonical());
                    }
                }
            }
        }
        return out;
    }
}
