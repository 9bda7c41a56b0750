package dev.engram.query;

import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.retrieval.PackedStrings;
import dev.engram.retrieval.Passage;
import dev.engram.retrieval.VectorArena;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.stores.StoredPassage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * What a query snapshot takes from one passage, decoded from the stores: the passage, its vectors, and what was
 * extracted from it with the names of facts and relations already resolved to its mentions. A namespace's snapshots keep the parts of unchanged passages from
 * one build to the next (see {@link GraphLoader}), so a build reads from the stores only what changed since the last.
 *
 * <p>Its vectors are handles into the namespace's {@link VectorArena}, not values: a namespace of 100k passages has
 * some millions of vectors, which stay out of the heap. The passage's title, headings, text and memory are in the arena
 * too ({@link Passage#inArena}).
 *
 * <p>Entities are referred to by surface id, and the members of facts and relations by the mention that bears their
 * name: which resolved entity a surface belongs to can change without the passage changing (a merge), so that is
 * looked up at each build.
 *
 * @param version the passage's version in memory (when it last changed), or -1 when not known: such a part is not kept
 * @param embedder the model that embedded the passage (null: not known)
 * @param passage the passage; null (and no vectors, mentions or facts) for one embedded by another model than the
 *     query's, which snapshots leave out
 * @param vector the handle of the passage's vector
 * @param extraBytes about how much heap the part holds beyond what a snapshot of it holds too: names and keys
 * @param mentions the passage's mentions that are linked to a surface entity, in the order extracted
 * @param questions the handles of its utility questions' vectors; null when the passage has no embeddings beside its
 *     own
 * @param questionKeys the keys of those vectors in the vector index ({@link MemoryGraph#questionKey}), made once and
 *     kept with the part
 * @param facts its facts with their vectors; empty when the passage has no embeddings beside its own
 * @param texts the texts of its relations, then of its facts
 * @param session the session key of a conversation's turn, else null
 * @param time its document's event time in epoch milliseconds ({@link Long#MIN_VALUE} when it has none)
 */
record PassagePart(
        long version,
        String embedder,
        Passage passage,
        long vector,
        Mentions mentions,
        List<Relation> relations,
        long[] questions,
        List<String> questionKeys,
        List<Fact> facts,
        Texts texts,
        long extraBytes,
        String session,
        long time) {

    /**
     * A passage's mentions of surface entities, in the order extracted, as arrays rather than an object each: a
     * namespace keeps about ten per passage. Each has its surface id (the one string the id is kept as), its type as
     * extracted and the handle of its "name: description" vector ({@link VectorArena#NONE} when the passage has none).
     * Their names as extracted are packed in the arena with the vectors, since a build reads a mention's name only for a
     * surface not in memory (yet); on the heap when there is no arena or they are too long for a handle.
     */
    static final class Mentions {
        static final Mentions NONE =
                new Mentions(new String[0], new byte[0], new long[0], null, VectorArena.NONE, null);
        private static final EntityType[] TYPES = EntityType.values();

        static {
            if (TYPES.length > Byte.MAX_VALUE) {
                throw new IllegalStateException("entity types no longer fit in a byte: " + TYPES.length);
            }
        }

        private final String[] surfaceIds;
        private final byte[] types;
        private final long[] vectors;
        /** Where the names are packed, or null when they are in {@link #onHeap} (or there are none). */
        private final VectorArena arena;

        private final long names;
        private final String[] onHeap;

        private Mentions(
                String[] surfaceIds, byte[] types, long[] vectors, VectorArena arena, long names, String[] onHeap) {
            this.surfaceIds = surfaceIds;
            this.types = types;
            this.vectors = vectors;
            this.arena = arena;
            this.names = names;
            this.onHeap = onHeap;
        }

        /** Mentions whose names are packed into {@code arena} (kept on the heap when they are too long for it). */
        static Mentions of(
                List<String> surfaceIds,
                List<String> names,
                List<EntityType> types,
                long[] vectors,
                VectorArena arena) {
            int n = surfaceIds.size();
            if (n == 0) {
                return NONE;
            }
            byte[] t = new byte[n];
            for (int i = 0; i < n; i++) {
                t[i] = (byte) types.get(i).ordinal();
            }
            String[] ids = surfaceIds.toArray(String[]::new);
            byte[] packed = PackedStrings.pack(names);
            if (packed.length > 4L * (VectorArena.MAX_LENGTH - 1)) {
                return new Mentions(ids, t, vectors, null, VectorArena.NONE, names.toArray(String[]::new));
            }
            return new Mentions(ids, t, vectors, arena, arena.addBytes(packed), null);
        }

        int size() {
            return surfaceIds.length;
        }

        String surfaceId(int i) {
            return surfaceIds[i];
        }

        EntityType type(int i) {
            return TYPES[types[i]];
        }

        long vector(int i) {
            return vectors[i];
        }

        /** The names of the mentions as extracted, in their order, read back from the arena at once. */
        List<String> names() {
            if (onHeap != null) {
                return List.of(onHeap);
            }
            return surfaceIds.length == 0 ? List.of() : PackedStrings.unpack(arena.bytes(names));
        }

        /** Each handle these mentions hold in their arena: their vectors' and their names'. */
        void forEachHandle(LongConsumer each) {
            for (long v : vectors) {
                each.accept(v);
            }
            if (arena != null) {
                each.accept(names);
            }
        }

        /** These mentions with their vectors and names copied from {@code from} into {@code to}. */
        Mentions movedTo(VectorArena from, VectorArena to) {
            if (surfaceIds.length == 0) {
                return this;
            }
            long[] vs = new long[vectors.length];
            for (int i = 0; i < vs.length; i++) {
                vs[i] = to.add(from.get(vectors[i]));
            }
            return arena == null
                    ? new Mentions(surfaceIds, types, vs, null, VectorArena.NONE, onHeap)
                    : new Mentions(surfaceIds, types, vs, to, to.addBytes(from.bytes(names)), null);
        }

        /** About the heap they hold. */
        long heapBytes() {
            long bytes = 64 + 13L * surfaceIds.length;
            if (onHeap != null) {
                for (String s : onHeap) {
                    bytes += 48 + 2L * s.length();
                }
            }
            return bytes;
        }
    }

    /**
     * A relation among entities: its members by the position among the passage's {@link #mentions} of the first
     * mention that bears their name or alias (normalized), each once, those no mention bears left out. Its text is the
     * passage's {@link #texts} at the relation's own position.
     */
    record Relation(int[] members) {}

    /**
     * A fact, its head and tail as the position of the first mention that bears their name (-1: none), and the key of
     * its vector ({@link MemoryGraph#factKey}). Its text is the passage's {@link #texts} after its relations', at the
     * fact's own position.
     */
    record Fact(String relation, int head, int tail, double confidence, long vector, String key) {}

    /**
     * The texts of a passage's relations, then of its facts, packed as one list in the arena ({@link PackedStrings}),
     * since a build reads them only for a passage new to its BM25 index of names and a query only for the few it
     * explains; on the heap when there is no arena or they are too long for a handle.
     */
    static final class Texts {
        static final Texts NONE = new Texts(VectorArena.NONE, new String[0]);

        /** The handle of the packed list in the part's arena, the builder's. */
        private final long handle;

        private final String[] onHeap;

        private Texts(long handle, String[] onHeap) {
            this.handle = handle;
            this.onHeap = onHeap;
        }

        static Texts of(List<String> texts, VectorArena arena) {
            if (texts.isEmpty()) {
                return NONE;
            }
            byte[] packed = PackedStrings.pack(texts);
            if (packed.length > 4L * (VectorArena.MAX_LENGTH - 1)) {
                return new Texts(VectorArena.NONE, texts.toArray(String[]::new));
            }
            return new Texts(arena.addBytes(packed), null);
        }

        /** Text {@code place} as a builder takes it, with the object that stands for it in the term cache. */
        void addTo(int place, Object key, Consumer<MemoryGraph.PackedText> packed, Consumer<String> heap) {
            if (onHeap != null) {
                heap.accept(onHeap[place]);
            } else {
                packed.accept(new MemoryGraph.PackedText(handle, place, key));
            }
        }

        void forEachHandle(LongConsumer each) {
            if (onHeap == null) {
                each.accept(handle);
            }
        }

        Texts movedTo(VectorArena from, VectorArena to) {
            return onHeap != null ? this : new Texts(to.addBytes(from.bytes(handle)), null);
        }

        long heapBytes() {
            long bytes = 32;
            if (onHeap != null) {
                for (String t : onHeap) {
                    bytes += 48 + t.length();
                }
            }
            return bytes;
        }
    }

    /** Adds relation {@code r} among {@code members} (entity indices) of the builder's passage {@code index}. */
    void addRelation(MemoryGraphBuilder b, int r, int index, int[] members) {
        texts.addTo(r, relations.get(r), t -> b.relation(t, index, members), t -> b.relation(t, index, members));
    }

    /** Adds fact {@code f} of the builder's passage {@code index}, its head and tail as entity indices or -1. */
    void addFact(MemoryGraphBuilder b, int f, int index, int head, int tail) {
        Fact x = facts.get(f);
        texts.addTo(
                relations.size() + f,
                x.key(), // the one string kept with the fact from its reading on: it stands for the text
                t -> b.fact(t, x.relation(), index, head, tail, x.confidence(), x.vector(), x.key()),
                t -> b.fact(t, x.relation(), index, head, tail, x.confidence(), x.vector(), x.key()));
    }

    /**
     * The part of a stored passage, its own vector and its other embeddings (null when it has none), whose values are
     * appended to {@code arena}.
     *
     * @param normalize a name's normalized form (the build's cache of {@code EntityNames::normalize})
     * @param surfaceIds the one string a surface id is kept as, shared by every mention of it
     */
    static PassagePart of(
            long version,
            StoredPassage p,
            float[] vector,
            Embeddings emb,
            Function<String, String> normalize,
            Function<String, String> surfaceIds,
            VectorArena arena) {
        Extraction x = p.extraction();
        List<String> ids = p.surfaceIdsByMention();
        List<String> mentionIds = new ArrayList<>();
        List<String> mentionNames = new ArrayList<>();
        List<EntityType> mentionTypes = new ArrayList<>();
        long[] mentionVectors = new long[x.entities().size()];
        // the names (normalized) the passage's facts and relations may name a mention by → the first mention so named:
        // resolved here once, so that a kept part holds positions rather than names
        Map<String, Integer> named = new HashMap<>();
        for (int i = 0; i < x.entities().size(); i++) {
            Extraction.Entity e = x.entities().get(i);
            if (ids.get(i) == null) {
                continue;
            }
            int at = mentionIds.size();
            named.putIfAbsent(normalize.apply(e.name()), at);
            e.aliases().forEach(a -> named.putIfAbsent(normalize.apply(a), at));
            float[] entityVector =
                    emb != null && i < emb.entities().size() ? emb.entities().get(i) : null;
            mentionIds.add(surfaceIds.apply(ids.get(i)));
            mentionNames.add(e.name());
            mentionTypes.add(e.type());
            mentionVectors[at] = arena.add(entityVector);
        }
        Mentions mentions = Mentions.of(
                mentionIds, mentionNames, mentionTypes, Arrays.copyOf(mentionVectors, mentionIds.size()), arena);
        List<Relation> relations = new ArrayList<>(x.relations().size());
        List<String> texts = new ArrayList<>();
        for (Extraction.Relation r : x.relations()) {
            int[] members = r.entities().stream()
                    .map(normalize)
                    .mapToInt(k -> named.getOrDefault(k, -1))
                    .filter(m -> m >= 0)
                    .distinct()
                    .toArray();
            relations.add(new Relation(members));
            texts.add(r.relation() + ": " + String.join(", ", r.entities()));
        }
        List<Fact> facts = new ArrayList<>();
        if (emb != null) {
            for (int f = 0; f < x.facts().size() && f < emb.facts().size(); f++) {
                Extraction.Fact fact = x.facts().get(f);
                texts.add(fact.text());
                facts.add(new Fact(
                        // a namespace has few relation types and many facts of each: one string per type
                        fact.relation() == null ? null : fact.relation().intern(),
                        named.getOrDefault(normalize.apply(fact.head()), -1),
                        named.getOrDefault(normalize.apply(fact.tail()), -1),
                        fact.confidence(),
                        arena.add(emb.facts().get(f)),
                        MemoryGraph.factKey(p.passageId(), f + 1)));
            }
        }
        Passage passage = Passage.inArena(
                arena,
                p.passageId(),
                p.documentId(),
                p.title(),
                p.headings(),
                p.text(),
                p.memory(),
                p.start(),
                p.end());
        return new PassagePart(
                version,
                // a namespace has one model or a few, and every passage names one: one string per model
                p.embedder() == null ? null : p.embedder().intern(),
                passage,
                arena.add(vector),
                mentions,
                List.copyOf(relations),
                emb == null ? null : added(emb.questions(), arena),
                emb == null ? null : questionKeys(p.passageId(), emb.questions().size()),
                List.copyOf(facts),
                Texts.of(texts, arena),
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
                version,
                embedder,
                null,
                VectorArena.NONE,
                Mentions.NONE,
                List.of(),
                null,
                null,
                List.of(),
                Texts.NONE,
                96,
                null,
                Long.MIN_VALUE);
    }

    private static long[] added(List<float[]> vectors, VectorArena arena) {
        long[] handles = new long[vectors.size()];
        for (int i = 0; i < handles.length; i++) {
            handles[i] = arena.add(vectors.get(i));
        }
        return handles;
    }

    /** Counts this part's vectors as no longer used in {@code arena}: the passage changed or went. */
    void retire(VectorArena arena) {
        forEachHandle(arena::retire);
        if (passage != null) {
            passage.retire();
        }
    }

    private void forEachHandle(LongConsumer each) {
        each.accept(vector);
        mentions.forEachHandle(each);
        if (questions != null) {
            for (long q : questions) {
                each.accept(q);
            }
        }
        facts.forEach(f -> each.accept(f.vector()));
        texts.forEachHandle(each);
    }

    /** This part with its vectors copied from {@code from} into {@code to}: what a compaction of the arena keeps. */
    PassagePart movedTo(VectorArena from, VectorArena to) {
        if (passage == null) {
            return this;
        }
        Mentions ms = mentions.movedTo(from, to);
        long[] qs = null;
        if (questions != null) {
            qs = new long[questions.length];
            for (int i = 0; i < qs.length; i++) {
                qs[i] = to.add(from.get(questions[i]));
            }
        }
        List<Fact> fs = facts.stream()
                .map(f -> new Fact(
                        f.relation(), f.head(), f.tail(), f.confidence(), to.add(from.get(f.vector())), f.key()))
                .toList();
        return new PassagePart(
                version,
                embedder,
                passage.movedTo(to),
                to.add(from.get(vector)),
                ms,
                relations,
                qs,
                questionKeys,
                fs,
                texts.movedTo(from, to),
                extraBytes,
                session,
                time);
    }

    private static List<String> questionKeys(String passageId, int count) {
        List<String> keys = new ArrayList<>(count);
        for (int j = 0; j < count; j++) {
            keys.add(MemoryGraph.questionKey(passageId, j));
        }
        return List.copyOf(keys);
    }

    private static long extraBytes(Mentions mentions, List<Relation> relations, List<Fact> facts) {
        long bytes = 96 + mentions.heapBytes();
        for (Relation r : relations) {
            bytes += 32 + 4L * r.members().length;
        }
        bytes += 64L * facts.size();
        return bytes;
    }
}
