package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryCommand;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * SEARCH → VERIFY → CONSTRUCT for entities, within one namespace and one input record: wires the {@link MentionLedger}
 * (mentions into surface entities), the {@link BlockingIndex} (candidates), the {@link PairDecider} (pair decisions)
 * and the {@link Grouper} (resolved entities) over the record's {@link MemoryTransaction}.
 *
 * <p>Order independence: a pair decision reads only the two surfaces, the blocks the shorter one sits in and their
 * shared context, and all of those are re-decided whenever they change, so the stores end up the same whatever order
 * documents arrive, update and leave in.
 */
final class EntityResolver {

    private final MemoryTransaction tx;
    private final MentionLedger ledger;
    private final BlockingIndex index;
    private final PairDecider decider;
    private final Grouper grouper;
    /** Surfaces an operator's command names. */
    private final Set<String> commanded = new TreeSet<>();

    /** The resolver of one record; {@code names} is the processor's cache of parsed names; {@code model} merges. */
    EntityResolver(MemoryTransaction tx, Meters meters, PairDecider.Names names, MergeModel model) {
        this.tx = tx;
        this.ledger = new MentionLedger(tx);
        this.index = new BlockingIndex(tx, () -> tx.onCommit(meters::blockSkipped));
        this.decider = new PairDecider(tx, index, new Contexts(tx), names, model);
        this.grouper = new Grouper(tx);
    }

    /**
     * Links a passage's accepted entity mentions; returns the surface ids in order of first mention. {@code session}
     * is the session key of a conversation's turn, else null.
     */
    List<String> link(
            String passageId, String documentId, String session, Extraction extraction, List<float[]> vectors) {
        return ledger.link(passageId, documentId, session, extraction, vectors);
    }

    /** Unlinks a passage from its surfaces; a surface left without mentions leaves memory with its pairs. */
    void unlink(String passageId, List<String> surfaceIds) {
        ledger.unlink(passageId, surfaceIds);
    }

    /** An operator's decision about a pair, applied when the record is resolved. */
    void command(MemoryCommand c) {
        decider.override(c);
        commanded.add(c.entityId());
        commanded.add(c.otherId());
    }

    /** Re-indexes the surfaces this record touched, re-decides the pairs that depend on them and regroups. */
    void resolve() {
        Map<String, Optional<EntityRecord>> touched = ledger.touched();
        if (touched.isEmpty() && commanded.isEmpty()) {
            return;
        }
        Set<String> redecide = new TreeSet<>();
        Set<String> contextOnly = new TreeSet<>();
        Set<String> regroup = new TreeSet<>();
        for (Map.Entry<String, Optional<EntityRecord>> t : touched.entrySet()) {
            String sid = t.getKey();
            EntityRecord before = t.getValue().orElse(null);
            EntityRecord after = tx.entities().get(Keys.of(tx.namespace(), sid));
            redecide.addAll(index.reindex(sid, before, after));
            // A short form that this surface stands (or stood) for may have become (un)ambiguous.
            redecide.addAll(decider.shortFormNeighbours(sid, before, after));
            // A described referent of its name came or went: a bare mention of the name may have become (un)ambiguous.
            redecide.addAll(decider.referentNeighbours(sid, before, after));
            if (after == null) {
                regroup.addAll(decider.forget(sid));
                regroup.add(sid);
            } else if (sameDecisionInputs(before, after)) {
                contextOnly.add(sid); // a new or lost mention: only its context changed
            } else {
                redecide.add(sid);
            }
        }
        redecide.addAll(commanded);
        contextOnly.removeAll(redecide);
        for (String sid : redecide) {
            EntityRecord e = tx.entities().get(Keys.of(tx.namespace(), sid));
            if (e != null) {
                regroup.addAll(decider.redecide(e, false));
                regroup.add(sid);
            }
        }
        for (String sid : contextOnly) {
            EntityRecord e = tx.entities().get(Keys.of(tx.namespace(), sid));
            if (e != null) {
                regroup.addAll(decider.redecide(e, true));
                regroup.add(sid);
            }
        }
        grouper.regroup(regroup);
    }

    /**
     * True when a surface kept everything a pair decision reads but its context: name, type, aliases, representative
     * embedding. Then only its stored pairs can change — every decision that context can turn (partial names, alike
     * names) is stored as defer or review while it waits — and the other candidates need not be decided again.
     */
    static boolean sameDecisionInputs(EntityRecord before, EntityRecord after) {
        return before != null
                && before.name().equals(after.name())
                && before.type() == after.type()
                && before.aliases().keySet().equals(after.aliases().keySet())
                && before.lsh().equals(after.lsh())
                && before.representative().equals(after.representative())
                && before.description().equals(after.description());
    }
}
