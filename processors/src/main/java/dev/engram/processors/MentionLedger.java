package dev.engram.processors;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.Span;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * The mentions of surface entities, within one record: a passage's entity mentions are grouped into surface entities
 * by normalized name and type (the unit of reference counting), and linking or unlinking a passage keeps each
 * surface's counts — mentions, passages, written forms and aliases — and its representative (the mention in the
 * smallest passage id: description and embedding) so that a surface is a function of its current mentions, never of
 * their order. A surface is created with its first mention and leaves memory with its last. Every surface whose
 * mentions changed is remembered with its state before the record ({@link #touched()}), for resolution.
 */
final class MentionLedger {

    private final MemoryTransaction tx;
    /** Surfaces whose mentions changed, with their state before the record (empty when new). */
    private final Map<String, Optional<EntityRecord>> touched = new TreeMap<>();

    MentionLedger(MemoryTransaction tx) {
        this.tx = tx;
    }

    /** The surfaces whose mentions this record changed, by id, with their state before it (empty when new). */
    Map<String, Optional<EntityRecord>> touched() {
        return Collections.unmodifiableMap(touched);
    }

    /**
     * Links a passage's accepted entity mentions; returns the surface ids in order of first mention. {@code session}
     * is the session key of a conversation's turn, else null.
     */
    List<String> link(
            String passageId, String documentId, String session, Extraction extraction, List<float[]> vectors) {
        String ns = tx.namespace();
        Map<String, List<Integer>> bySurface = new LinkedHashMap<>();
        List<String> ids = EntityNames.surfaceIds(ns, extraction.entities());
        for (int i = 0; i < ids.size(); i++) {
            if (ids.get(i) != null) {
                bySurface.computeIfAbsent(ids.get(i), k -> new ArrayList<>()).add(i);
            }
        }
        for (Map.Entry<String, List<Integer>> e : bySurface.entrySet()) {
            String sid = e.getKey();
            Extraction.Entity first = extraction.entities().get(e.getValue().get(0));
            String normalized = EntityNames.normalize(first.name());
            int count = 0;
            Set<String> aliases = new TreeSet<>();
            Map<String, String> aliasForms = new TreeMap<>(); // normalized → first written form
            List<Span> spans = new ArrayList<>();
            String description = "";
            for (int i : e.getValue()) {
                Extraction.Entity m = extraction.entities().get(i);
                count += Math.max(1, m.spans().size());
                spans.addAll(m.spans());
                for (String written : m.aliases()) {
                    String a = EntityNames.normalize(written);
                    if (!a.isEmpty() && !a.equals(normalized)) {
                        aliases.add(a);
                        aliasForms.putIfAbsent(a, written.strip());
                    }
                }
                if (description.isEmpty()) {
                    description = m.description();
                }
            }
            float[] vector = e.getValue().get(0) < vectors.size()
                    ? vectors.get(e.getValue().get(0))
                    : null;
            EntityRecord before = tx.entities().get(Keys.of(ns, sid));
            remember(sid, before);
            MentionRecord mention = new MentionRecord(
                    count,
                    first.name(),
                    NameForms.typeClass(first.type()),
                    description,
                    List.copyOf(aliases),
                    spans,
                    documentId,
                    extraction.extractor(),
                    before == null ? "create" : "update",
                    tx.now(),
                    List.copyOf(aliasForms.values()),
                    session);
            tx.mentions().put(Keys.of(ns, sid, passageId), mention);
            EntityRecord after;
            if (before == null) {
                after = new EntityRecord(
                        ns,
                        sid,
                        first.name(),
                        normalized,
                        NameForms.typeClass(first.type()),
                        count,
                        1,
                        Map.of(first.name(), 1),
                        counted(Map.of(), aliases, 1),
                        description,
                        passageId,
                        BlockingIndex.Lsh.buckets(vector),
                        sid);
                putVector(sid, vector);
                tx.change(new MemoryChange.EntityCreated(
                        ns, tx.nextVersion(), tx.now(), sid, first.name(), after.type()));
                tx.counts(0, 0, 1, 1);
                tx.members().put(Keys.of(ns, sid, sid), normalized);
            } else {
                Map<String, Integer> forms = new HashMap<>(before.forms());
                forms.merge(first.name(), 1, Integer::sum);
                boolean representative = passageId.compareTo(before.representative()) < 0;
                after = new EntityRecord(
                        ns,
                        sid,
                        displayName(forms),
                        normalized,
                        before.type(),
                        before.mentions() + count,
                        before.passages() + 1,
                        forms,
                        counted(before.aliases(), aliases, 1),
                        representative ? description : before.description(),
                        representative ? passageId : before.representative(),
                        representative ? BlockingIndex.Lsh.buckets(vector) : before.lsh(),
                        before.canonical());
                if (representative) {
                    putVector(sid, vector);
                }
                if (!after.aliases().keySet().equals(before.aliases().keySet())
                        || !after.description().equals(before.description())) {
                    tx.decision(
                            MemoryChange.EntityDecision.Kind.UPDATE, sid, null, "aliases_description", 1, List.of());
                }
            }
            tx.entities().put(Keys.of(ns, sid), after);
        }
        StringBuilder lines = new StringBuilder();
        for (Map.Entry<String, List<Integer>> e : bySurface.entrySet()) {
            Extraction.Entity first = extraction.entities().get(e.getValue().get(0));
            lines.append(e.getKey())
                    .append(' ')
                    .append(NameForms.typeClass(first.type()).wireName())
                    .append(' ')
                    .append(first.name().replace('\n', ' '))
                    .append('\n');
        }
        tx.passageEntities().put(Keys.of(ns, passageId), lines.toString());
        for (String sid : bySurface.keySet()) {
            tx.change(new MemoryChange.LinkAdded(ns, tx.nextVersion(), tx.now(), passageId, sid));
        }
        return List.copyOf(bySurface.keySet());
    }

    /** Unlinks a passage from its surfaces; a surface left without mentions leaves memory. */
    void unlink(String passageId, List<String> surfaceIds) {
        String ns = tx.namespace();
        tx.passageEntities().delete(Keys.of(ns, passageId));
        for (String sid : surfaceIds) {
            MentionRecord mention = tx.mentions().delete(Keys.of(ns, sid, passageId));
            if (mention == null) {
                continue;
            }
            tx.change(new MemoryChange.LinkRemoved(ns, tx.nextVersion(), tx.now(), passageId, sid));
            EntityRecord before = tx.entities().get(Keys.of(ns, sid));
            if (before == null) {
                continue;
            }
            remember(sid, before);
            if (before.passages() <= 1) {
                tx.entities().delete(Keys.of(ns, sid));
                tx.entityVectors().delete(Keys.of(ns, sid));
                tx.members().delete(Keys.of(ns, before.canonical(), sid));
                tx.counts(0, 0, before.merged() ? 0 : -1, -1);
                tx.change(new MemoryChange.EntityRemoved(ns, tx.nextVersion(), tx.now(), sid, before.name()));
                continue;
            }
            Map<String, Integer> forms = new HashMap<>(before.forms());
            forms.computeIfPresent(mention.form(), (k, v) -> v <= 1 ? null : v - 1);
            EntityRecord after = new EntityRecord(
                    ns,
                    sid,
                    displayName(forms),
                    before.normalized(),
                    before.type(),
                    Math.max(0, before.mentions() - mention.mentions()),
                    before.passages() - 1,
                    forms,
                    counted(before.aliases(), mention.aliases(), -1),
                    before.description(),
                    before.representative(),
                    before.lsh(),
                    before.canonical());
            if (passageId.equals(before.representative())) {
                after = withRepresentative(after);
            }
            tx.entities().put(Keys.of(ns, sid), after);
        }
    }

    private void remember(String sid, EntityRecord before) {
        touched.putIfAbsent(sid, Optional.ofNullable(before));
    }

    private void putVector(String sid, float[] vector) {
        String key = Keys.of(tx.namespace(), sid);
        if (vector == null) {
            tx.entityVectors().delete(key);
        } else {
            tx.entityVectors().put(key, StoredVectors.encode(vector));
        }
    }

    /** The representative is the smallest passage id still mentioning the surface: its description and vector. */
    private EntityRecord withRepresentative(EntityRecord e) {
        String ns = tx.namespace();
        String passageId = null;
        MentionRecord mention = null;
        try (KeyValueIterator<String, MentionRecord> it = tx.mentions().prefixScan(Keys.prefix(ns, e.id()))) {
            if (it.hasNext()) {
                var kv = it.next();
                passageId = Keys.last(kv.key);
                mention = kv.value;
            }
        }
        if (passageId == null) {
            return e;
        }
        float[] vector = null;
        StoredPassage p = tx.passages().get(Keys.of(ns, passageId));
        Embeddings emb = tx.embeddings().get(Keys.of(ns, passageId));
        if (p != null && emb != null) {
            List<String> ids = p.surfaceIdsByMention();
            for (int i = 0; i < ids.size() && i < emb.entities().size(); i++) {
                if (e.id().equals(ids.get(i))) {
                    vector = emb.entities().get(i);
                    break;
                }
            }
        }
        putVector(e.id(), vector);
        return e.withRepresentative(passageId, mention.description(), BlockingIndex.Lsh.buckets(vector));
    }

    private static Map<String, Integer> counted(Map<String, Integer> base, Iterable<String> keys, int delta) {
        Map<String, Integer> out = new TreeMap<>(base);
        for (String k : keys) {
            out.merge(k, delta, Integer::sum);
            if (out.get(k) <= 0) {
                out.remove(k);
            }
        }
        return out;
    }

    /** The most used written form; ties go to the lexicographically smallest, so history does not matter. */
    static String displayName(Map<String, Integer> forms) {
        String best = null;
        int count = -1;
        for (Map.Entry<String, Integer> f : new TreeMap<>(forms).entrySet()) {
            if (f.getValue() > count) {
                best = f.getKey();
                count = f.getValue();
            }
        }
        return best;
    }
}
