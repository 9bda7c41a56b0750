package dev.engram.retrieval;

import dev.engram.schemas.EntityType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

/**
 * An immutable, compact in-memory snapshot of one namespace's memory: passages with their vectors, entities and
 * the passage–entity links, facts with their vectors, and a BM25 index. Every retrieval mode runs over it, so modes
 * are testable without Kafka and comparable on the same data. Built from the state stores (see the topology's loader).
 */
public final class MemoryGraph {

    /** One fact: its text, the passage it came from and the entities it relates (-1 when not an entity). */
    public record Fact(int passage, int head, int tail, double confidence) {}

    /**
     * A fact's or relation's text kept in the builder's arena: the string at {@code place} of the list packed there as
     * {@code handle} ({@link PackedStrings}), and the object that stands for it in the namespace's term cache as long as
     * it does not change ({@link MemoryGraphBuilder#terms}).
     */
    public record PackedText(long handle, int place, Object key) {}

    /**
     * A GEM-RAG eigen-theme as a summary node: its member passages (strongest first), its summary and the vectors
     * of its utility questions.
     */
    public record ThemeNode(int rank, double eigenvalue, int[] members, String summary, float[][] questionVectors) {}

    /** A relation among several entities (a hyperedge): its text, passage and entity indices. */
    public record Relation(int passage, int[] entities) {}

    final long version;
    final List<Passage> passages;
    /** The vectors' values live in the namespace's arena (a mapped file for a namespace on disk), not in the heap. */
    final Vectors passageVectors;

    final List<String> entityIds;
    final List<String> entityNames;
    /** Each entity's type, as its extractor gave it (the first one seen for a resolved entity). */
    final List<EntityType> entityTypes;

    final int[][] entityPassages;
    final int[][] passageEntities;
    final List<Fact> facts;
    /** The facts' texts, by fact: in the arena, read when asked for. */
    private final UnitTexts factTexts;
    /** Each fact's relation type (lower case), or "" when not known. */
    final List<String> factRelations;
    /** Relation type → passages that state a fact of it; counted once per snapshot, when first asked. */
    private volatile Map<String, Integer> relationTypes;

    final Vectors factVectors;
    final Bm25 bm25;
    final List<Relation> relations;
    /** The relations' texts ("type: member, member"), by relation. */
    private final UnitTexts relationTexts;

    final Vectors entityVectors;
    final int[][] entityFacts;
    final int[][] entityRelations;
    /** BM25 over the names of knowledge units: entities, then facts, then relations (IGMiRAG's name corpus). */
    final Bm25 unitNames;
    /** Per-unit arrays (entities, facts, relations) that queries on this snapshot reuse. */
    final Scratch unitScratch;
    /** Per-node arrays of the passage–entity graph (entities, then passages) that queries on this snapshot reuse. */
    final Scratch nodeScratch;
    /**
     * Per passage, the handles of its utility questions' vectors (mean of question and passage, normalized) in the
     * arena of {@link #questionVectors}; may be empty.
     */
    final long[][] passageQuestions;

    final List<ThemeNode> themes;

    /** The most utility questions any passage has (at least 1). */
    final int maxQuestionsPerPassage;

    /** Every utility question's vector, and the passage it belongs to. */
    final Vectors questionVectors;

    final int[] questionPassage;

    /** Nearest-neighbour search per kind of vector: exact scans, or HNSW graphs for large namespaces. */
    final VectorIndex passageSearch;

    final VectorIndex factSearch;
    final VectorIndex entitySearch;
    final VectorIndex questionSearch;
    /** The passages without utility questions (GEM-RAG's zero-question case), by their own vectors. */
    final VectorIndex barePassageSearch;

    private final Runnable release;
    private final AtomicBoolean released = new AtomicBoolean();

    private final IdIndex entityIndexById;

    /** Each passage's index by its id. */
    private final IdIndex passageIndexById;

    /**
     * Each passage's neighbours in its context, or -1: the passages before and after it in its document (by offset),
     * or, for a conversation's turn, the turns before and after it in its session (by event time, then as added).
     */
    final int[] previousInContext;

    final int[] nextInContext;

    /** Each passage's place in its context (0 for the first) and how many passages its context holds. */
    final int[] placeInContext;

    final int[] contextSize;

    /**
     * The passages with an event time, in order of their day (UTC epoch day), and those days: what a question that
     * names a time reads ({@link #passagesBetween}).
     */
    private final DatedPassages dated;

    /** The passages by their titles, for the links a passage's text makes by naming another document's title. */
    final TitleLinks titleLinks;

    MemoryGraph(MemoryGraphBuilder b) {
        this.version = b.version;
        this.passages = List.copyOf(b.passages);
        VectorArena arena = b.arena();
        this.passageVectors = new Vectors(arena, b.passageVectors.toArray());
        this.entityIds = List.copyOf(b.entityIds);
        this.entityNames = List.copyOf(b.entityNames);
        this.entityTypes = List.copyOf(b.entityTypes);
        this.entityIndexById = b.entityIndex.frozen(entityIds);
        this.facts = List.copyOf(b.facts);
        this.factTexts = b.factTexts.build(arena);
        this.factRelations = List.copyOf(b.factRelations);
        this.factVectors = new Vectors(arena, b.factVectors.toArray());
        // the links as flat arrays per node, without an object per link: a snapshot of 100k passages has millions
        this.entityPassages = b.links.grouped(entityIds.size(), passages.size());
        this.passageEntities = EntityLinks.passageEntities(entityPassages, passages.size());
        this.previousInContext = new int[passages.size()];
        this.nextInContext = new int[passages.size()];
        this.placeInContext = new int[passages.size()];
        this.contextSize = new int[passages.size()];
        ContextNeighbours.link(
                passages, b.sessions::get, previousInContext, nextInContext, placeInContext, contextSize);
        this.dated = new DatedPassages(passages.size(), b.dated, b.times);
        this.titleLinks = new TitleLinks(passages);
        // with the namespace's term cache, a text is known by its passage's text key or its name string, kept by the
        // builder's caller for as long as the text does not change; without one, every text is read
        TermCache terms = b.terms == null ? new TermCache() : b.terms;
        boolean kept = b.terms != null;
        terms.begin(kept ? arena : null); // the counts of kept texts beside the snapshot's vectors
        this.bm25 = new Bm25(
                passages.size(),
                i -> {
                    Passage.Texts t = passages.get(i).texts();
                    return t.title() + "\n" + t.text();
                },
                kept ? i -> passages.get(i).textKey() : null,
                terms,
                1.2,
                0.75);
        this.relations = List.copyOf(b.relations);
        this.relationTexts = b.relationTexts.build(arena);
        this.entityVectors = new Vectors(arena, b.entityVectors.toArray());
        this.entityFacts = EntityLinks.entityFacts(facts, entityIds.size());
        this.entityRelations = EntityLinks.entityRelations(relations, entityIds.size());
        // the names of units: an entity's name stands for itself in the term cache, a fact's or relation's text has
        // the key its builder gave (read from the arena only when the cache does not hold its counts)
        int ne = entityNames.size();
        int nf = factTexts.size();
        IntFunction<String> name =
                u -> u < ne ? entityNames.get(u) : u < ne + nf ? factTexts.get(u - ne) : relationTexts.get(u - ne - nf);
        IntFunction<Object> nameKey = u ->
                u < ne ? entityNames.get(u) : u < ne + nf ? b.factTexts.key(u - ne) : b.relationTexts.key(u - ne - nf);
        this.unitNames = new Bm25(ne + nf + relationTexts.size(), name, kept ? nameKey : null, terms, 1.2, 0.75);
        if (kept) {
            terms.built((long) bm25.termCount() + unitNames.termCount());
        }
        this.unitScratch = new Scratch(ne + nf + relationTexts.size());
        this.nodeScratch = new Scratch(entityNames.size() + passages.size());
        this.passageQuestions = new long[passages.size()][];
        for (int i = 0; i < passageQuestions.length; i++) {
            long[] qs = b.passageQuestions.get(i);
            passageQuestions[i] = qs == null ? new long[0] : qs;
        }
        this.themes = ThemeNodes.of(b.themes, passageVectors, passageQuestions);
        UtilityQuestions questions = new UtilityQuestions(arena, passageQuestions, b.questionKeys::get, passages);
        this.maxQuestionsPerPassage = questions.mostPerPassage;
        this.questionVectors = questions.vectors;
        this.questionPassage = questions.passages;
        this.passageIndexById = b.passageIndex.frozen(b.passageIds);
        VectorBatches laid = new VectorBatches(
                Collections.unmodifiableList(b.passageIds),
                passageIndexById,
                passageVectors,
                passageQuestions,
                facts,
                b.factKeys,
                factVectors,
                entityIds,
                entityIndexById,
                entityVectors,
                questions.keys,
                questionVectors);
        VectorIndexer.Indexed indexed = b.indexer.index(laid.batches);
        this.passageSearch = indexed.byKind().get("passage");
        this.factSearch = indexed.byKind().get("fact");
        this.entitySearch = indexed.byKind().get("entity");
        this.questionSearch = indexed.byKind().get("question");
        this.barePassageSearch = laid.allBare ? passageSearch : indexed.byKind().get("bare_passage");
        this.release = indexed.release();
    }

    /** How each kind of vector is searched in this snapshot: "exact" or "hnsw". */
    public Map<String, String> vectorSearch() {
        return Map.of(
                "passage", passageSearch.kind(),
                "fact", factSearch.kind(),
                "entity", entitySearch.kind(),
                "question", questionSearch.kind());
    }

    /**
     * Lets go of the snapshot's index readers once it is no longer served; searches still running finish, later
     * ones scan exactly.
     */
    public void release() {
        if (released.compareAndSet(false, true)) {
            release.run();
        }
    }

    /** Scales {@code v} to unit length in place (a zero vector stays as it is). */
    static void normalize(float[] v) {
        double n = 0;
        for (float x : v) {
            n += (double) x * x;
        }
        if (n > 0) {
            float inv = (float) (1 / Math.sqrt(n));
            for (int i = 0; i < v.length; i++) {
                v[i] *= inv;
            }
        }
    }

    /**
     * About how much heap the snapshot holds: its vectors (their handles, and their arena's chunks that are on the heap,
     * retired values and room to grow included) and texts (the BM25 postings and adjacency add a fraction of
     * that). Used to keep the snapshots of an instance within a memory budget.
     */
    public long estimatedBytes() {
        long bytes = 0;
        for (Vectors vectors : List.of(passageVectors, factVectors, entityVectors, questionVectors)) {
            bytes += vectors.heapBytes();
        }
        // the values, where the arena keeps them on the heap (one arena for all kinds)
        bytes += passageVectors.arena().heapBytes();
        for (long[] qs : passageQuestions) {
            bytes += 16 + 8L * qs.length;
        }
        for (Passage p : passages) {
            // text and memory, and about as much again for the BM25 postings of the text
            // and its two neighbours, its place and its context's size, its day and its place among the dated
            bytes += 28 + p.heapBytes() + 2L * p.textBytes();
        }
        bytes += 40L * facts.size() + factTexts.heapBytes() + relationTexts.heapBytes() + titleLinks.bytes();
        bytes += 8L * passages.size(); // the passages' id index
        // the arrays its queries reuse, as many as it may keep
        bytes += unitScratch.maxBytes() + nodeScratch.maxBytes() + unitNames.scratchBytes() + bm25.scratchBytes();
        return bytes;
    }

    public long version() {
        return version;
    }

    /** The passages whose event time falls on the days {@code from} to {@code to} (UTC epoch days, inclusive). */
    public int[] passagesBetween(long from, long to) {
        return dated.between(from, to);
    }

    /** How many passages have an event time. */
    public int datedPassages() {
        return dated.count();
    }

    /** The passage before {@code p} in its document or session, or -1. */
    public int previousInContext(int p) {
        return previousInContext[p];
    }

    /** The passage after {@code p} in its document or session, or -1. */
    public int nextInContext(int p) {
        return nextInContext[p];
    }

    public int passageCount() {
        return passages.size();
    }

    public Passage passage(int i) {
        return passages.get(i);
    }

    /** The index of the passage {@code id}, or -1 when this snapshot does not hold it. */
    public int passageIndex(String id) {
        return passageIndexById.indexOf(id);
    }

    /** The inner product of {@code query} with passage {@code p}'s vector: their cosine, as both are unit length. */
    public double passageSimilarity(int p, float[] query) {
        return passageVectors.dot(p, query);
    }

    public int entityCount() {
        return entityIds.size();
    }

    /** The id of entity {@code e}: its resolved entity's (the smallest surface id of its group). */
    public String entityId(int e) {
        return entityIds.get(e);
    }

    public String entityName(int e) {
        return entityNames.get(e);
    }

    public EntityType entityType(int e) {
        return entityTypes.get(e);
    }

    /** The passages that mention entity {@code e}, ascending. */
    public int[] entityPassages(int e) {
        return entityPassages[e].clone();
    }

    public Fact fact(int f) {
        return facts.get(f);
    }

    /** The text of fact {@code f}. */
    public String factText(int f) {
        return factTexts.get(f);
    }

    /** The text of relation {@code r} ("type: member, member"). */
    public String relationText(int r) {
        return relationTexts.get(r);
    }

    public int relationCount() {
        return relations.size();
    }

    public Relation relation(int r) {
        return relations.get(r);
    }

    public int factCount() {
        return facts.size();
    }

    /** The ids of the {@code k} entities whose vectors are nearest {@code q}, nearest first. */
    public List<String> nearestEntities(float[] q, int k) {
        List<String> out = new ArrayList<>();
        for (Retrieval.Scored s : entitySearch.nearest(q, k)) {
            out.add(entityIds.get(s.passage()));
        }
        return out;
    }

    /** The relation types of the snapshot's facts and how many passages state a fact of each. */
    public Map<String, Integer> relationTypes() {
        Map<String, Integer> counted = relationTypes;
        if (counted == null) {
            Map<String, Set<Integer>> passagesOf = new HashMap<>();
            for (int f = 0; f < facts.size(); f++) {
                String r = factRelations.get(f);
                if (!r.isEmpty()) {
                    passagesOf
                            .computeIfAbsent(r, k -> new HashSet<>())
                            .add(facts.get(f).passage());
                }
            }
            Map<String, Integer> out = new HashMap<>();
            passagesOf.forEach((r, ps) -> out.put(r, ps.size()));
            counted = Map.copyOf(out);
            relationTypes = counted;
        }
        return counted;
    }

    /** The index of the entity with this id, or -1. */
    public int entityIndex(String id) {
        return entityIndexById.indexOf(id);
    }

    public static MemoryGraphBuilder builder(long version) {
        return new MemoryGraphBuilder(version);
    }

    /** The key of a fact's vector: its passage's id and its ordinal among the passage's facts, from 1. */
    public static String factKey(String passageId, int ordinal) {
        return passageId + "#f" + ordinal;
    }

    /** The key of a utility question's vector: its passage's id and its position among the passage's, from 0. */
    public static String questionKey(String passageId, int position) {
        return passageId + "#q" + position;
    }
}
