package dev.engram.processors;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.Span;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.MirrorIds;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import dev.engram.stores.ThemeSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The mirror records of one memory transaction: for every object the record changed — documents, passages with their
 * facts and questions, surface entities, mentions, themes — its whole new state (or a delete), derived from the staged
 * writes themselves, so that no change can reach the stores without reaching the mirrors. Each object's version and
 * sync state are staged in the {@code memory-mirror} store in the same transaction.
 *
 * <p>Records come in the order a graph needs them: nodes before the relationships that join them, relationships
 * deleted before their nodes.
 */
final class Mirror {

    private Mirror() {}

    /** Stages the mirror entries of everything {@code tx} changed; returns the records to emit when it commits. */
    static List<MirrorRecord> stage(MemoryTransaction tx) {
        String ns = tx.namespace();
        long version = tx.state().version();
        Instant at = tx.now();
        Map<Kind, Map<String, MirrorRecord.MirrorObject>> upserts = new LinkedHashMap<>();
        Map<Kind, TreeSet<String>> deletes = new LinkedHashMap<>();
        for (Kind k : Kind.values()) {
            upserts.put(k, new LinkedHashMap<>());
            deletes.put(k, new TreeSet<>());
        }

        for (String key : tx.documents().stagedKeys()) {
            // compared as mirrored: a manifest read again changes the stored record's time, not what the mirrors hold
            DocumentRecord now = tx.documents().get(key);
            DocumentRecord before = tx.documents().stored(key);
            MirrorRecord.Document mirrored = now == null ? null : document(now);
            if (!Objects.equals(mirrored, before == null ? null : document(before))) {
                String id = Keys.last(key);
                if (mirrored == null) {
                    deletes.get(Kind.DOCUMENT).add(id);
                } else {
                    upserts.get(Kind.DOCUMENT).put(id, mirrored);
                }
            }
        }
        TreeSet<String> passageKeys = new TreeSet<>(tx.passages().stagedKeys());
        passageKeys.addAll(tx.vectors().stagedKeys());
        passageKeys.addAll(tx.embeddings().stagedKeys());
        for (String key : passageKeys) {
            passage(tx, ns, key, upserts, deletes);
        }
        TreeSet<String> entityKeys = new TreeSet<>(tx.entities().stagedKeys());
        entityKeys.addAll(tx.entityVectors().stagedKeys());
        for (String key : entityKeys) {
            EntityRecord now = tx.entities().get(key);
            EntityRecord before = tx.entities().stored(key);
            boolean vectorChanged = !Arrays.equals(
                    tx.entityVectors().get(key), tx.entityVectors().stored(key));
            if (now == null) {
                if (before != null) {
                    deletes.get(Kind.ENTITY).add(Keys.last(key));
                }
            } else if (vectorChanged || !now.equals(before)) {
                upserts.get(Kind.ENTITY)
                        .put(now.id(), entity(now, tx.entityVectors().get(key)));
            }
        }
        for (String key : tx.mentions().stagedKeys()) {
            mention(tx, ns, key, upserts, deletes);
        }
        for (String key : tx.themes().stagedKeys()) {
            themes(tx.themes().stored(key), tx.themes().get(key), upserts, deletes);
        }

        // what a reader of the namespace's log reads again: passages (with their facts and questions) and surfaces
        upserts.get(Kind.PASSAGE).keySet().forEach(tx::passageChanged);
        deletes.get(Kind.PASSAGE).forEach(tx::passageChanged);
        upserts.get(Kind.ENTITY).keySet().forEach(tx::surfaceChanged);
        deletes.get(Kind.ENTITY).forEach(tx::surfaceChanged);

        List<MirrorRecord> out = new ArrayList<>();
        for (Kind k : Kind.values()) {
            upserts.get(k).forEach((id, object) -> {
                MirrorRecord record = MirrorRecord.upsert(ns, id, version, at, object);
                stageEntry(tx, ns, k, id, version, vectorBits(record), at);
                out.add(record);
            });
        }
        List<Kind> reverse = new ArrayList<>(List.of(Kind.values()));
        Collections.reverse(reverse);
        for (Kind k : reverse) {
            for (String id : deletes.get(k)) {
                if (upserts.get(k).containsKey(id)) {
                    continue;
                }
                String key = MirrorIds.key(ns, k, id);
                tx.mirror().delete(key);
                tx.compensated().delete(key);
                out.add(MirrorRecord.delete(ns, k, id, version, at));
            }
        }
        return out;
    }

    private static int vectorBits(MirrorRecord record) {
        int bits = 0;
        for (MirrorRecord.VectorKind v : record.vectors().keySet()) {
            bits |= v.bit();
        }
        return bits;
    }

    private static void stageEntry(
            MemoryTransaction tx, String ns, Kind kind, String id, long version, int vectors, Instant at) {
        String key = MirrorIds.key(ns, kind, id);
        tx.mirror().put(key, MirrorEntry.at(version, vectors, at));
        // a new version replaces whatever a mirror rejected before: it is written afresh
        tx.compensated().delete(key);
    }

    // ---- the current state of each kind, as the mirrors hold it ----------------------------------------------------

    /** The mirrored state of the object {@code kind}/{@code id} as memory holds it now; null when it is not there. */
    static MirrorRecord current(MemoryTransaction tx, Kind kind, String id) {
        String ns = tx.namespace();
        MirrorEntry entry = tx.mirror().get(MirrorIds.key(ns, kind, id));
        if (entry == null) {
            return null;
        }
        MirrorRecord.MirrorObject object =
                switch (kind) {
                    case DOCUMENT -> {
                        DocumentRecord d = tx.documents().get(Keys.of(ns, id));
                        yield d == null ? null : document(d);
                    }
                    case PASSAGE -> {
                        String key = Keys.of(ns, id);
                        StoredPassage p = tx.passages().get(key);
                        yield p == null
                                ? null
                                : passage(
                                        p,
                                        tx.vectors().get(key),
                                        tx.embeddings().get(key));
                    }
                    case ENTITY -> {
                        String key = Keys.of(ns, id);
                        EntityRecord e = tx.entities().get(key);
                        yield e == null ? null : entity(e, tx.entityVectors().get(key));
                    }
                    case MENTION -> {
                        String[] parts = MirrorIds.mentionParts(id);
                        MentionRecord m = tx.mentions().get(Keys.of(ns, parts[1], parts[0]));
                        StoredPassage p = tx.passages().get(Keys.of(ns, parts[0]));
                        yield m == null ? null : mention(parts[0], parts[1], m, p == null ? "" : p.text());
                    }
                    case FACT, QUESTION -> {
                        String passageId = MirrorIds.passageOf(id);
                        String key = Keys.of(ns, passageId);
                        StoredPassage p = tx.passages().get(key);
                        if (p == null) {
                            yield null;
                        }
                        Map<String, MirrorRecord.MirrorObject> parts = kind == Kind.FACT
                                ? facts(
                                        tx.entities()::get,
                                        ns,
                                        p,
                                        tx.embeddings().get(key))
                                : questions(p, tx.embeddings().get(key));
                        yield parts.get(id);
                    }
                    case THEME -> {
                        ThemeSet themes = tx.themes().get(ns);
                        yield themes == null ? null : themesOf(themes).get(id);
                    }
                };
        return object == null ? null : MirrorRecord.upsert(ns, id, entry.version(), entry.at(), object);
    }

    private static void passage(
            MemoryTransaction tx,
            String ns,
            String key,
            Map<Kind, Map<String, MirrorRecord.MirrorObject>> upserts,
            Map<Kind, TreeSet<String>> deletes) {
        StoredPassage now = tx.passages().get(key);
        StoredPassage before = tx.passages().stored(key);
        Embeddings nowVectors = tx.embeddings().get(key);
        Embeddings beforeVectors = tx.embeddings().stored(key);
        Map<String, MirrorRecord.MirrorObject> factsBefore =
                before == null ? Map.of() : facts(tx.entities()::stored, ns, before, beforeVectors);
        Map<String, MirrorRecord.MirrorObject> questionsBefore =
                before == null ? Map.of() : questions(before, beforeVectors);
        String id = Keys.last(key);
        if (now == null) {
            if (before != null) {
                deletes.get(Kind.PASSAGE).add(id);
            }
            deletes.get(Kind.FACT).addAll(factsBefore.keySet());
            deletes.get(Kind.QUESTION).addAll(questionsBefore.keySet());
            return;
        }
        boolean changed = !now.equals(before)
                || !Arrays.equals(tx.vectors().get(key), tx.vectors().stored(key))
                || !sameVectors(nowVectors, beforeVectors);
        if (!changed) {
            return;
        }
        upserts.get(Kind.PASSAGE).put(id, passage(now, tx.vectors().get(key), nowVectors));
        Map<String, MirrorRecord.MirrorObject> factsNow = facts(tx.entities()::get, ns, now, nowVectors);
        upserts.get(Kind.FACT).putAll(factsNow);
        factsBefore.keySet().stream().filter(f -> !factsNow.containsKey(f)).forEach(deletes.get(Kind.FACT)::add);
        Map<String, MirrorRecord.MirrorObject> questionsNow = questions(now, nowVectors);
        upserts.get(Kind.QUESTION).putAll(questionsNow);
        questionsBefore.keySet().stream()
                .filter(q -> !questionsNow.containsKey(q))
                .forEach(deletes.get(Kind.QUESTION)::add);
    }

    private static void mention(
            MemoryTransaction tx,
            String ns,
            String key,
            Map<Kind, Map<String, MirrorRecord.MirrorObject>> upserts,
            Map<Kind, TreeSet<String>> deletes) {
        MentionRecord now = tx.mentions().get(key);
        MentionRecord before = tx.mentions().stored(key);
        if (Objects.equals(now, before)) {
            return;
        }
        // (namespace, surface id, passage id)
        String rest = key.substring(Keys.prefix(ns).length());
        String surfaceId = rest.substring(0, rest.indexOf(Keys.SEPARATOR));
        String passageId = Keys.last(key);
        String id = MirrorIds.mentionId(passageId, surfaceId);
        if (now == null) {
            deletes.get(Kind.MENTION).add(id);
        } else {
            StoredPassage p = tx.passages().get(Keys.of(ns, passageId));
            upserts.get(Kind.MENTION).put(id, mention(passageId, surfaceId, now, p == null ? "" : p.text()));
        }
    }

    private static void themes(
            ThemeSet before,
            ThemeSet now,
            Map<Kind, Map<String, MirrorRecord.MirrorObject>> upserts,
            Map<Kind, TreeSet<String>> deletes) {
        Map<String, MirrorRecord.MirrorObject> was = before == null ? Map.of() : themesOf(before);
        Map<String, MirrorRecord.MirrorObject> is = now == null ? Map.of() : themesOf(now);
        is.forEach((id, theme) -> {
            if (!theme.equals(was.get(id))) {
                upserts.get(Kind.THEME).put(id, theme);
            }
        });
        was.keySet().stream().filter(id -> !is.containsKey(id)).forEach(deletes.get(Kind.THEME)::add);
    }

    private static Map<String, MirrorRecord.MirrorObject> themesOf(ThemeSet set) {
        Map<String, MirrorRecord.MirrorObject> out = new LinkedHashMap<>();
        for (ThemeSet.Theme t : set.themes()) {
            out.put(
                    MirrorIds.themeId(t.rank()),
                    new MirrorRecord.Theme(t.rank(), t.eigenvalue(), t.passageIds(), t.summary()));
        }
        return out;
    }

    static MirrorRecord.Document document(DocumentRecord d) {
        return new MirrorRecord.Document(
                d.title(),
                d.source(),
                d.status(),
                d.version(),
                d.eventTime(),
                d.passages().size(),
                d.present());
    }

    static MirrorRecord.Passage passage(StoredPassage p, byte[] vector, Embeddings embeddings) {
        return new MirrorRecord.Passage(
                p.documentId(),
                p.documentVersion(),
                p.ordinal(),
                p.title(),
                p.headings(),
                p.text(),
                p.memory(),
                p.start(),
                p.end(),
                p.contentHash(),
                p.extraction().extractor(),
                p.embedder(),
                vector == null ? null : StoredVectors.decode(vector),
                embeddings == null ? null : embeddings.memory());
    }

    static MirrorRecord.Entity entity(EntityRecord e, byte[] vector) {
        return new MirrorRecord.Entity(
                e.name(),
                e.type(),
                e.description(),
                List.copyOf(new TreeSet<>(e.aliases().keySet())),
                List.copyOf(new TreeSet<>(e.forms().keySet())),
                e.canonical(),
                e.mentions(),
                e.passages(),
                vector == null ? null : StoredVectors.decode(vector));
    }

    static MirrorRecord.Mention mention(String passageId, String surfaceId, MentionRecord m, String text) {
        List<String> evidence = m.spans().stream().map(s -> excerpt(text, s)).toList();
        return new MirrorRecord.Mention(
                passageId, surfaceId, m.documentId(), m.form(), m.description(), m.spans(), evidence, m.extractor());
    }

    /** The facts of a passage whose head and tail are surface entities in {@code entities}, by fact id. */
    static Map<String, MirrorRecord.MirrorObject> facts(
            Function<String, EntityRecord> entities, String ns, StoredPassage p, Embeddings vectors) {
        Extraction x = p.extraction();
        Map<String, String> byName = new HashMap<>();
        List<String> ids = p.surfaceIdsByMention();
        for (int i = 0; i < ids.size(); i++) {
            Extraction.Entity e = x.entities().get(i);
            String surface = ids.get(i);
            if (surface == null || entities.apply(Keys.of(ns, surface)) == null) {
                continue;
            }
            byName.putIfAbsent(EntityNames.normalize(e.name()), surface);
            e.aliases().forEach(a -> byName.putIfAbsent(EntityNames.normalize(a), surface));
        }
        Map<String, MirrorRecord.MirrorObject> out = new LinkedHashMap<>();
        for (int i = 0; i < x.facts().size(); i++) {
            Extraction.Fact f = x.facts().get(i);
            String head = byName.get(EntityNames.normalize(f.head()));
            String tail = byName.get(EntityNames.normalize(f.tail()));
            if (head == null || tail == null) {
                continue;
            }
            float[] vector = vectors != null && i < vectors.facts().size()
                    ? vectors.facts().get(i)
                    : null;
            out.put(
                    MirrorIds.factId(p.passageId(), i),
                    new MirrorRecord.Fact(
                            p.passageId(),
                            p.documentId(),
                            head,
                            f.relation(),
                            tail,
                            f.head(),
                            f.tail(),
                            f.evidence() == null ? null : excerpt(p.text(), f.evidence()),
                            f.confidence(),
                            vector));
        }
        return out;
    }

    /** The utility questions of a passage, by question id. */
    static Map<String, MirrorRecord.MirrorObject> questions(StoredPassage p, Embeddings vectors) {
        Map<String, MirrorRecord.MirrorObject> out = new LinkedHashMap<>();
        List<String> questions = p.extraction().questions();
        for (int i = 0; i < questions.size(); i++) {
            float[] vector = vectors != null && i < vectors.questions().size()
                    ? vectors.questions().get(i)
                    : null;
            out.put(
                    MirrorIds.questionId(p.passageId(), i),
                    new MirrorRecord.Question(p.passageId(), p.documentId(), questions.get(i), vector));
        }
        return out;
    }

    private static String excerpt(String text, Span span) {
        int start = Math.min(span.start(), text.length());
        int end = Math.min(Math.max(span.end(), start), text.length());
        return text.substring(start, end);
    }

    private static boolean sameVectors(Embeddings a, Embeddings b) {
        if (a == null || b == null) {
            return a == null && b == null;
        }
        return Arrays.equals(a.passage(), b.passage())
                && Arrays.equals(a.memory(), b.memory())
                && sameList(a.entities(), b.entities())
                && sameList(a.facts(), b.facts())
                && sameList(a.questions(), b.questions());
    }

    private static boolean sameList(List<float[]> a, List<float[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }
}
