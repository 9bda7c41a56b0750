package dev.engram.retrieval;

import dev.engram.retrieval.MemoryGraph.Fact;
import dev.engram.retrieval.MemoryGraph.Relation;
import dev.engram.schemas.EntityType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/** Collects a namespace's memory; entities are referred to by id. A builder builds one snapshot. */
public final class MemoryGraphBuilder {
    final long version;
    final List<Passage> passages = new ArrayList<>();
    final Handles passageVectors = new Handles();
    /** The passages' ids, in their order: appended by {@link #passageIndex}. */
    final List<String> passageIds = new ArrayList<>();
    /** Each passage's position by id, kept by the snapshot for its vector batches. */
    final IdIndex.Growing passageIndex = new IdIndex.Growing(passageIds);

    final List<String> entityIds = new ArrayList<>();
    final List<String> entityNames = new ArrayList<>();
    final List<EntityType> entityTypes = new ArrayList<>();
    /** Each entity's position by id: the snapshot keeps it ({@link IdIndex.Growing#frozen}). */
    final IdIndex.Growing entityIndex = new IdIndex.Growing(entityIds);
    /** Entity → passage links, as added (repeats are dropped at the build). */
    final Pairs links = new Pairs();

    final List<Fact> facts = new ArrayList<>();
    final UnitTexts.Builder factTexts = new UnitTexts.Builder();
    final UnitTexts.Builder relationTexts = new UnitTexts.Builder();
    final Handles factVectors = new Handles();
    final List<Relation> relations = new ArrayList<>();
    final Handles entityVectors = new Handles();
    /** Per passage, the handles of its utility questions' vectors (null: none). */
    final ByPassage<long[]> passageQuestions = new ByPassage<>();

    final List<PendingTheme> themes = new ArrayList<>();
    final List<String> factKeys = new ArrayList<>();
    /** Per passage, its questions' keys as the caller gave them (null: made at the build). */
    final ByPassage<List<String>> questionKeys = new ByPassage<>();

    private boolean built;
    final List<String> factRelations = new ArrayList<>();
    /** Each relation as given → its type as kept (stripped, lower case). */
    private final Map<String, String> relationTypes = new HashMap<>();
    /** Per passage, how many facts it has so far (what numbers a fact's key). */
    private int[] factsPerPassage = new int[256];

    VectorIndexer indexer = VectorIndexer.EXACT;
    TermCache terms;
    /** Where the vectors given by value are appended, and the handles given refer to; on the heap unless set. */
    private VectorArena arena;

    record PendingTheme(int rank, double eigenvalue, int[] members, String summary) {}

    /** The session of a conversation's turn and its time (epoch milliseconds). */
    record Session(String key, long time) {}

    /** Per passage, its session when it is a conversation's turn (null: none). */
    final ByPassage<Session> sessions = new ByPassage<>();

    /** Per passage, its event time (epoch milliseconds), where {@link #dated} says it has one. */
    long[] times = new long[16];

    final BitSet dated = new BitSet();

    MemoryGraphBuilder(long version) {
        this.version = version;
    }

    /** Adds a passage; returns its index. */
    public int passage(Passage p, float[] vector) {
        return passage(p, arena().add(Objects.requireNonNull(vector, "a passage's vector")));
    }

    /** Adds a passage whose vector is in the builder's {@link #arena(VectorArena) arena}; returns its index. */
    public int passage(Passage p, long vector) {
        if (vector == VectorArena.NONE) {
            throw new IllegalArgumentException("passage " + p.id() + " has no vector");
        }
        int i = passages.size();
        if (passageIndex.positionOf(p.id()) >= 0) {
            throw new IllegalArgumentException("passage " + p.id() + " is already in the snapshot");
        }
        passages.add(p);
        passageVectors.add(vector);
        return i;
    }

    /**
     * The arena the vectors passed by handle are in, and where those passed by value are appended; set before any
     * vector is added (unset: a new one on the heap).
     */
    public MemoryGraphBuilder arena(VectorArena a) {
        if (arena != null && arena != a) {
            throw new IllegalStateException("the builder's vectors are already in another arena");
        }
        this.arena = a;
        return this;
    }

    VectorArena arena() {
        if (arena == null) {
            arena = VectorArena.onHeap();
        }
        return arena;
    }

    /**
     * Marks passage {@code passage} as a turn of the session {@code key}, written at {@code time} (epoch
     * milliseconds; turns of one time keep the order they were added in): its neighbours are the session's turns
     * before and after it, not its document's passages.
     */
    public void session(int passage, String key, long time) {
        Objects.checkIndex(passage, passages.size());
        sessions.set(passage, new Session(key, time));
    }

    /** The event time of passage {@code passage}'s document (epoch milliseconds). */
    public void time(int passage, long time) {
        Objects.checkIndex(passage, passages.size());
        if (passage >= times.length) {
            times = Arrays.copyOf(times, Math.max(passage + 1, times.length * 2));
        }
        times[passage] = time;
        dated.set(passage);
    }

    /** Declares an entity (idempotent); returns its index. */
    public int entity(String id, String name) {
        return entity(id, name, EntityType.OTHER);
    }

    /** Adds an entity of a type, unless it has been added: then its index (its first name and type stay). */
    public int entity(String id, String name, EntityType type) {
        if (built) {
            throw new IllegalStateException("the snapshot is built");
        }
        int known = entityIndex.positionOf(Objects.requireNonNull(id, "an entity's id"));
        if (known >= 0) {
            return known;
        }
        // appended to entityIds by the index
        entityNames.add(name);
        entityTypes.add(type == null ? EntityType.OTHER : type);
        entityVectors.add(VectorArena.NONE);
        return entityIds.size() - 1;
    }

    /** Gives an entity its "name: description" vector, unless it has one. */
    public void entityVector(int entity, float[] vector) {
        if (entityVectors.get(entity) == VectorArena.NONE) {
            entityVectors.set(entity, arena().add(vector));
        }
    }

    /** Gives an entity its vector by handle in the builder's arena, unless it has one. */
    public void entityVector(int entity, long vector) {
        if (entityVectors.get(entity) == VectorArena.NONE) {
            entityVectors.set(entity, vector);
        }
    }

    /** Adds a relation among entities (indices) of a passage. */
    public void relation(String text, int passage, int[] entities) {
        relations.add(new Relation(passage, entities));
        relationTexts.add(text);
    }

    /** Adds a relation as above, its text packed in the builder's arena. */
    public void relation(MemoryGraph.PackedText text, int passage, int[] entities) {
        relationTexts.add(text.handle(), text.place(), text.key());
        relations.add(new Relation(passage, entities));
    }

    /** Links an entity to a passage. */
    public void link(int entity, int passage) {
        Objects.checkIndex(entity, entityIds.size());
        Objects.checkIndex(passage, passages.size());
        links.add(entity, passage);
    }

    /** Adds a fact of a passage; head and tail are entity indices or -1. */
    public void fact(String text, int passage, int head, int tail, double confidence, float[] vector) {
        fact(text, "", passage, head, tail, confidence, vector);
    }

    /** Adds a fact of a passage with its relation type; head and tail are entity indices or -1. */
    public void fact(String text, String relation, int passage, int head, int tail, double confidence, float[] vector) {
        fact(text, relation, passage, head, tail, confidence, vector, null);
    }

    /**
     * Adds a fact as {@link #fact(String, String, int, int, int, double, float[])}, with its vector's key: the
     * {@link MemoryGraph#factKey} of its passage and its ordinal there (null: made here). A caller that passes the same key
     * objects from one snapshot to the next spares the vector index hashing and comparing new strings.
     */
    public void fact(
            String text,
            String relation,
            int passage,
            int head,
            int tail,
            double confidence,
            float[] vector,
            String key) {
        fact(text, relation, passage, head, tail, confidence, arena().add(vector), key);
    }

    /** Adds a fact as above, its vector by handle in the builder's arena ({@link VectorArena#NONE}: none). */
    public void fact(
            String text, String relation, int passage, int head, int tail, double confidence, long vector, String key) {
        addFact(relation, passage, head, tail, confidence, vector, key);
        factTexts.add(text);
    }

    /** Adds a fact as above, its text packed in the builder's arena. */
    public void fact(
            MemoryGraph.PackedText text,
            String relation,
            int passage,
            int head,
            int tail,
            double confidence,
            long vector,
            String key) {
        addFact(relation, passage, head, tail, confidence, vector, key);
        factTexts.add(text.handle(), text.place(), text.key());
    }

    private void addFact(String relation, int passage, int head, int tail, double confidence, long vector, String key) {
        Objects.checkIndex(passage, passages.size());
        if (head >= entityIds.size() || tail >= entityIds.size()) {
            throw new IndexOutOfBoundsException("no entity " + Math.max(head, tail) + " of " + entityIds.size());
        }
        // a namespace has few relation types and many facts of each: one string per type, not per fact
        factRelations.add(relationTypes.computeIfAbsent(relation, r -> r.strip().toLowerCase(Locale.ROOT)));
        facts.add(new Fact(passage, head, tail, confidence));
        factVectors.add(vector);
        if (passage >= factsPerPassage.length) {
            factsPerPassage = Arrays.copyOf(factsPerPassage, Math.max(passage + 1, factsPerPassage.length * 2));
        }
        int ordinal = ++factsPerPassage[passage];
        factKeys.add(
                key != null ? key : MemoryGraph.factKey(passages.get(passage).id(), ordinal));
    }

    /** How the snapshot's vectors are to be searched; exact scans unless set. */
    public MemoryGraphBuilder indexer(VectorIndexer indexer) {
        this.indexer = indexer;
        return this;
    }

    /**
     * The namespace's term cache, kept between its snapshots: the BM25 indexes read only texts whose passage
     * record or name string it has not seen (none is read again while the caller passes the same objects).
     */
    public MemoryGraphBuilder terms(TermCache cache) {
        this.terms = cache;
        return this;
    }

    /** The vectors of a passage's utility questions (GEM-RAG: mean of question and passage, normalized). */
    public void questions(int passage, List<float[]> vectors) {
        Objects.checkIndex(passage, passages.size());
        passageQuestions.set(passage, added(vectors));
        questionKeys.set(passage, null);
    }

    long[] added(List<float[]> vectors) {
        long[] handles = new long[vectors.size()];
        for (int i = 0; i < handles.length; i++) {
            handles[i] = arena().add(Objects.requireNonNull(vectors.get(i), "a question's vector"));
        }
        return handles;
    }

    /**
     * The vectors of a passage's utility questions with their keys ({@link MemoryGraph#questionKey}, one per vector), as the
     * caller keeps them from one snapshot to the next.
     */
    public void questions(int passage, List<float[]> vectors, List<String> keys) {
        if (keys.size() != vectors.size()) {
            throw new IllegalArgumentException(keys.size() + " keys for " + vectors.size() + " question vectors");
        }
        Objects.checkIndex(passage, passages.size());
        passageQuestions.set(passage, added(vectors));
        questionKeys.set(passage, List.copyOf(keys));
    }

    /**
     * The handles of a passage's utility questions' vectors in the builder's arena, with their keys ({@link
     * #questionKey}, one per vector), as the caller keeps them from one snapshot to the next.
     */
    public void questions(int passage, long[] vectors, List<String> keys) {
        if (keys.size() != vectors.length) {
            throw new IllegalArgumentException(keys.size() + " keys for " + vectors.length + " question vectors");
        }
        Objects.checkIndex(passage, passages.size());
        passageQuestions.set(passage, vectors.clone());
        questionKeys.set(passage, List.copyOf(keys));
    }

    /** An eigen-theme over passages (indices, strongest first). */
    public void theme(int rank, double eigenvalue, int[] members, String summary) {
        themes.add(new PendingTheme(rank, eigenvalue, members.clone(), summary));
    }

    /** The index of the passage with this id, or -1. */
    public int passageIndex(String id) {
        return passageIndex.indexOf(id);
    }

    /** The snapshot; a builder builds one (the snapshot keeps its entity index's table). */
    public MemoryGraph build() {
        if (built) {
            throw new IllegalStateException("a builder builds one snapshot");
        }
        built = true;
        return new MemoryGraph(this);
    }

    /** Values by passage index, null where none was set: an array, not a map of boxed indices. */
    static final class ByPassage<T> {
        private Object[] values = new Object[16];

        void set(int passage, T value) {
            if (passage >= values.length) {
                values = Arrays.copyOf(values, Math.max(passage + 1, values.length * 2));
            }
            values[passage] = value;
        }

        /** The value of {@code passage}, or null. */
        @SuppressWarnings("unchecked")
        T get(int passage) {
            return passage < values.length ? (T) values[passage] : null;
        }
    }

    /** A growable array of vector handles. */
    static final class Handles {
        private long[] values = new long[16];
        private int size;

        void add(long h) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = h;
        }

        long get(int i) {
            Objects.checkIndex(i, size);
            return values[i];
        }

        void set(int i, long h) {
            Objects.checkIndex(i, size);
            values[i] = h;
        }

        long[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }
}
