package dev.engram.query;

import dev.engram.retrieval.MemoryGraph;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.stores.StoredPassage;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What a query snapshot takes from one passage, decoded from the stores: the passage, its vectors, and what was
 * extracted from it with names already normalized. A namespace's snapshots keep the parts of unchanged passages from
 * one build to the next (see {@link GraphLoader}), so a build reads from the stores only what changed since the last.
 *
 * <p>Entities are referred to by surface id and facts and relations by normalized name: which resolved entity a
 * surface belongs to can change without the passage changing (a merge), so that is looked up at each build.
 *
 * @param version the passage's version in memory (when it last changed), or -1 when not known: such a part is not kept
 * @param embedder the model that embedded the passage (null: not known)
 * @param passage the passage; null (and no vectors, mentions or facts) for one embedded by another model than the
 *     query's, which snapshots leave out
 * @param extraBytes about how much heap the part holds beyond what a snapshot of it holds too: the vectors of mentions
 *     whose entity gets its vector from another passage (counted all, as which ones is known only at the build), names
 *     and keys
 * @param mentions the passage's mentions that are linked to a surface entity, in the order extracted
 * @param questions the vectors of its utility questions; null when the passage has no embeddings beside its own
 * @param questionKeys the keys of those vectors in the vector index ({@link MemoryGraph#questionKey}), made once and
 *     kept with the part
 * @param facts its facts with their vectors; empty when the passage has no embeddings beside its own
 * @param session the session key of a conversation's turn, else null
 * @param time its document's event time in epoch milliseconds ({@link Long#MIN_VALUE} when it has none)
 */
record PassagePart(
        long version,
        String embedder,
        MemoryGraph.Passage passage,
        float[] vector,
        List<Mention> mentions,
        List<Relation> relations,
        List<float[]> questions,
        List<String> questionKeys,
        List<Fact> facts,
        long extraBytes,
        String session,
        long time) {

    /**
     * A mention of a surface entity: its name and type as extracted, its "name: description" vector (null when the
     * passage has none), and the normalized name and aliases the passage's facts and relations may name it by.
     */
    record Mention(String surfaceId, String name, EntityType type, float[] vector, List<String> keys) {}

    /** A relation among entities, by the normalized names of its members. */
    record Relation(String text, List<String> memberKeys) {}

    /** A fact, its head and tail by normalized name, and the key of its vector ({@link MemoryGraph#factKey}). */
    record Fact(
            String text,
            String relation,
            String headKey,
            String tailKey,
            double confidence,
            float[] vector,
            String key) {}

    /**
     * The part of a stored passage, its own vector and its other embeddings (null when it has none).
     *
     * @param normalize a name's normalized form (the build's cache of {@code EntityNames::normalize})
     */
    static PassagePart of(
            long version, StoredPassage p, float[] vector, Embeddings emb, Function<String, String> normalize) {
        Extraction x = p.extraction();
        List<String> surfaceIds = p.surfaceIdsByMention();
        List<Mention> mentions = new ArrayList<>();
        for (int i = 0; i < x.entities().size(); i++) {
            Extraction.Entity e = x.entities().get(i);
            if (surfaceIds.get(i) == null) {
                continue;
            }
            List<String> keys = new ArrayList<>(1 + e.aliases().size());
            keys.add(normalize.apply(e.name()));
            e.aliases().forEach(a -> keys.add(normalize.apply(a)));
            float[] entityVector =
                    emb != null && i < emb.entities().size() ? emb.entities().get(i) : null;
            mentions.add(new Mention(surfaceIds.get(i), e.name(), e.type(), entityVector, List.copyOf(keys)));
        }
        List<Relation> relations = new ArrayList<>(x.relations().size());
        for (Extraction.Relation r : x.relations()) {
            relations.add(new Relation(
                    r.relation() + ": " + String.join(", ", r.entities()),
                    r.entities().stream().map(normalize).toList()));
        }
        List<Fact> facts = new ArrayList<>();
        if (emb != null) {
            for (int f = 0; f < x.facts().size() && f < emb.facts().size(); f++) {
                Extraction.Fact fact = x.facts().get(f);
                facts.add(new Fact(
                        fact.text(),
                        fact.relation(),
                        normalize.apply(fact.head()),
                        normalize.apply(fact.tail()),
                        fact.confidence(),
                        emb.facts().get(f),
                        MemoryGraph.factKey(p.passageId(), f + 1)));
            }
        }
        MemoryGraph.Passage passage = new MemoryGraph.Passage(
                p.passageId(), p.documentId(), p.title(), p.headings(), p.text(), p.memory(), p.start(), p.end());
        return new PassagePart(
                version,
                p.embedder(),
                passage,
                vector,
                List.copyOf(mentions),
                List.copyOf(relations),
                emb == null ? null : List.copyOf(emb.questions()),
                emb == null ? null : questionKeys(p.passageId(), emb.questions().size()),
                List.copyOf(facts),
                extraBytes(mentions, relations, facts),
                p.session(),
                p.eventTime() == null ? Long.MIN_VALUE : p.eventTime().toEpochMilli());
    }

    /**
     * The part of a passage another model embedded, which snapshots leave out: only its version and model are kept,
     * so that it is not read again until it changes.
     */
    static PassagePart otherModel(long version, String embedder) {
        return new PassagePart(
                version, embedder, null, null, List.of(), List.of(), null, null, List.of(), 96, null, Long.MIN_VALUE);
    }

    private static List<String> questionKeys(String passageId, int count) {
        List<String> keys = new ArrayList<>(count);
        for (int j = 0; j < count; j++) {
            keys.add(MemoryGraph.questionKey(passageId, j));
        }
        return List.copyOf(keys);
    }

    private static long extraBytes(List<Mention> mentions, List<Relation> relations, List<Fact> facts) {
        long bytes = 96;
        for (Mention m : mentions) {
            bytes += 64
                    + (m.vector() == null ? 0 : 16 + 4L * m.vector().length)
                    + 2L * m.name().length();
            for (String k : m.keys()) {
                bytes += 40 + 2L * k.length();
            }
        }
        for (Relation r : relations) {
            bytes += 48 + 2L * r.text().length() + 48L * r.memberKeys().size();
        }
        for (Fact f : facts) {
            bytes += 64 + 2L * (f.headKey().length() + f.tailKey().length());
        }
        return bytes;
    }
}
