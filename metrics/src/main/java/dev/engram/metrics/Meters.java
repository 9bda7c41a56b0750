package dev.engram.metrics;

import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Every Engram meter: names, tags and units live here and nowhere else. Prometheus names are the dotted names with
 * underscores and the unit/total suffix, e.g. {@code engram.documents} → {@code engram_documents_total}. A tag with a
 * fixed set of values is an enum (here, or in the schemas when the value is also written to a topic), and its counters
 * are registered from the enum's values.
 */
public final class Meters {

    /** Documents read, by outcome: upserted, deleted, unchanged, unknown_delete, dead_lettered. */
    public static final String DOCUMENTS = "engram.documents";
    /** Passage events emitted by the read step, by op: upsert, retract. */
    public static final String PASSAGES = "engram.passages";
    /** Records sent to the dead-letter topic, by stage and cause. */
    public static final String DEAD_LETTERS = "engram.dead.letters";
    /** Time to understand one passage, by extractor. */
    public static final String UNDERSTAND = "engram.understand";
    /** Memory changes emitted, by type. */
    public static final String MEMORY_CHANGES = "engram.memory.changes";
    /** Memory-step inputs skipped because a newer document version superseded them. */
    public static final String STALE = "engram.memory.stale";
    /**
     * Passages a remote model failed on transiently (no answer, 429, 5xx) and that wait to be tried again rather than
     * being dead-lettered.
     */
    public static final String UNDERSTAND_RETRIES = "engram.understand.retries";
    /** Passages this instance's understand tasks hold while a remote model understands them; a gauge. */
    public static final String UNDERSTAND_PENDING = "engram.understand.pending";
    /** Vectors the latest query snapshots scan beside their HNSW graphs while the graphs are written; a gauge. */
    public static final String VECTOR_INDEX_WAITING = "engram.vector.index.waiting";

    public static final String SNAPSHOT_VECTOR_ARENA = "engram.snapshot.vector.arena";
    /** Background writes of snapshots' vectors into the HNSW indexes that failed; a counter. */
    public static final String VECTOR_INDEX_WRITE_FAILURES = "engram.vector.index.write.failures";

    public static final String EMBEDDING_TEXTS = "engram.embedding.texts";
    /** Extraction-cache lookups, by result: hit, miss. */
    public static final String EXTRACTION_CACHE = "engram.extraction.cache";
    /** LLM tokens spent on extraction, by namespace, model and kind (prompt, completion). */
    public static final String LLM_TOKENS = "engram.llm.tokens";
    /** Estimated LLM cost of extraction in US dollars, by namespace and model. */
    public static final String LLM_COST = "engram.llm.cost.usd";
    /** LLM calls, by model and outcome (ok, retried, failed). */
    public static final String LLM_CALLS = "engram.llm.calls";

    public static final String AGENT_PASSAGES = "engram.agent.passages";
    public static final String AGENT_ROUNDS = "engram.agent.rounds";
    public static final String AGENT_TOOL_CALLS = "engram.agent.tool.calls";
    /** Entities and facts that failed verification (kept for review), by kind. */
    public static final String REJECTED = "engram.verify.rejected";
    /** Entity-resolution pair decisions made, by decision. */
    public static final String RESOLUTION = "engram.resolution.decisions";
    /** Theme summaries written, by kind. */
    public static final String THEME_SUMMARIES = "engram.theme.summaries";
    /** Blocking-index lookups skipped because the block was too large to discriminate. */
    public static final String RESOLUTION_SKIPPED = "engram.resolution.blocks.skipped";

    /** Mirror records emitted by the memory step, by op: upsert, delete, repair. */
    public static final String MIRROR_RECORDS = "engram.mirror.records";
    /** Mirror records applied by a sink, by sink and outcome: applied, superseded (a newer version was there). */
    public static final String SINK_RECORDS = "engram.sink.records";
    /** Time of one batched write to a mirror, by sink and outcome (ok, failed); a timer. */
    public static final String SINK_WRITES = "engram.sink.writes";
    /** Records per batch written to a mirror, by sink; a distribution. */
    public static final String SINK_BATCH = "engram.sink.batch.records";
    /** Transient mirror failures retried, by sink. */
    public static final String SINK_RETRIES = "engram.sink.retries";
    /** Times a sink paused its partitions after transient failures outlasted the retries, by sink. */
    public static final String SINK_PAUSES = "engram.sink.pauses";
    /** 1 while a sink is paused, else 0, by sink; a gauge. */
    public static final String SINK_PAUSED = "engram.sink.paused";
    /** Mirror records not yet applied by this instance's sink (summed over its partitions); a gauge. */
    public static final String SINK_LAG_RECORDS = "engram.sink.lag.records";
    /** Age of the oldest mirror record this instance's sink has not applied, in seconds; a gauge. */
    public static final String SINK_LAG_SECONDS = "engram.sink.lag.seconds";
    /** Compensation events written by a sink, by sink and outcome (compensated, repaired). */
    public static final String SINK_COMPENSATIONS = "engram.sink.compensations";
    /** Objects the consistency check found drifting, by finding (missing, stale, orphaned). */
    public static final String MIRROR_DRIFT = "engram.mirror.drift";
    /** Drifting objects sent for repair by the consistency repair. */
    public static final String MIRROR_DRIFT_REPAIRED = "engram.mirror.drift.repaired";
    /**
     * Partitions of the mirror topic whose history a sink found cut: records it never applied were already deleted by
     * retention; the mirrors miss them until the consistency repair runs.
     */
    public static final String MIRROR_HISTORY_GAPS = "engram.mirror.history.gaps";

    /** Query snapshots built, by how (inline, background) and outcome (ok, failed); a timer. */
    public static final String SNAPSHOT_BUILDS = "engram.snapshot.builds";
    /**
     * Passages put into query snapshots, by source: read from the state stores (new or changed since the namespace's
     * previous snapshot), or kept from it as decoded.
     */
    public static final String SNAPSHOT_PASSAGES = "engram.snapshot.passages";
    /** Vectors written to or deleted from the HNSW indexes, by op (write, delete). */
    public static final String VECTOR_INDEX_WRITES = "engram.vector.index.writes";
    /** Snapshots searched exactly because their namespace's HNSW index could not be written. */
    public static final String VECTOR_INDEX_UNAVAILABLE = "engram.vector.index.unavailable";

    /** HTTP requests, by route, method and status. */
    public static final String HTTP_REQUESTS = "engram.http.requests";
    /** Retrievals served, by mode. */
    public static final String RETRIEVALS = "engram.retrievals";
    /** Documents in memory by namespace and status, for the namespaces this instance owns; a gauge. */
    public static final String DOCUMENTS_BY_STATUS = "engram.documents.status";
    /** Objects a mirror rejected that memory keeps re-emitting until one takes them, by namespace; a gauge. */
    public static final String MIRROR_REJECTED = "engram.mirror.rejected.objects";

    /** A tag value out of a fixed set: the enum constant's name in lowercase. */
    public interface TagValue {
        String name();

        /** The value of the tag. */
        default String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What became of a document event (tag {@code outcome} of {@link #DOCUMENTS}). */
    public enum DocumentOutcome implements TagValue {
        UPSERTED,
        UNCHANGED,
        DELETED,
        UNKNOWN_DELETE,
        DEAD_LETTERED
    }

    /** Passage events of the read step (tag {@code op} of {@link #PASSAGES}). */
    public enum PassageOp implements TagValue {
        UPSERT,
        RETRACT
    }

    /** Extraction-cache lookups (tag {@code result} of {@link #EXTRACTION_CACHE}). */
    public enum CacheResult implements TagValue {
        HIT,
        MISS,
        /** A record of the cache's topic that is no extraction: skipped, its key forgotten. */
        INVALID
    }

    /** What failed verification (tag {@code kind} of {@link #REJECTED}). */
    public enum RejectedKind implements TagValue {
        ENTITY,
        FACT
    }

    /** Memory-step inputs a newer document version superseded (tag {@code kind} of {@link #STALE}). */
    public enum StaleKind implements TagValue {
        PASSAGE,
        MANIFEST
    }

    /** Theme summaries (tag {@code kind} of {@link #THEME_SUMMARIES}). */
    public enum ThemeSummaryKind implements TagValue {
        EXTRACTIVE,
        ABSTRACTIVE,
        FAILED
    }

    /** How a query snapshot was built (tag {@code how} of {@link #SNAPSHOT_BUILDS}). */
    public enum SnapshotHow implements TagValue {
        INLINE,
        BACKGROUND,
        /** A recent layer: the passages changed since a snapshot, read beside it while the next one is built. */
        RECENT
    }

    /** Where a snapshot's passage came from (tag {@code source} of {@link #SNAPSHOT_PASSAGES}). */
    public enum SnapshotSource implements TagValue {
        STORES,
        KEPT
    }

    /** What the memory step emitted for the mirrors (tag {@code op} of {@link #MIRROR_RECORDS}). */
    public enum MirrorOp implements TagValue {
        UPSERT,
        DELETE,
        REPAIR
    }

    /** The mirrors (tag {@code sink} of the sink meters). */
    public enum Sink implements TagValue {
        NEO4J,
        QDRANT
    }

    /** What a sink did with a record (tag {@code outcome} of {@link #SINK_RECORDS}). */
    public enum SinkRecordOutcome implements TagValue {
        APPLIED,
        SUPERSEDED
    }

    /** What a sink reported (tag {@code outcome} of {@link #SINK_COMPENSATIONS}). */
    public enum CompensationOutcome implements TagValue {
        COMPENSATED,
        REPAIRED
    }

    /** What the consistency check found (tag {@code finding} of {@link #MIRROR_DRIFT}). */
    public enum DriftFinding implements TagValue {
        MISSING,
        STALE,
        ORPHANED
    }

    private final MeterRegistry registry;
    private final StreamTotals totals;
    private final IngestMeters ingest;
    private final LlmMeters llm;
    private final MemoryMeters memory;
    private final MirrorMeters mirrors;
    private final QueryMeters query;

    public Meters(MeterRegistry registry) {
        this.registry = registry;
        // Each area registers its counters at zero, so rates and alerts work before the first event.
        this.mirrors = new MirrorMeters(registry);
        this.query = new QueryMeters(registry);
        this.totals = new StreamTotals(registry);
        this.ingest = new IngestMeters(registry);
        this.llm = new LlmMeters(registry);
        this.memory = new MemoryMeters(registry);
    }

    /** Registers the meters of a sink at zero, so that its rates and alerts work before the first write. */
    public void registerSink(Sink sink) {
        mirrors.registerSink(sink);
    }

    /** Meters that record into a private registry, for tests and tools that do not export metrics. */
    public static Meters detached() {
        return new Meters(new SimpleMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    // ---- read, understand, memory ---------------------------------------------------------------------------------

    /** The key under which a stream step keeps its total of documents with this outcome. */
    public static String documentsKey(DocumentOutcome outcome) {
        return DOCUMENTS + "/" + outcome.tag();
    }

    /** The key under which a stream step keeps its total of dead letters of this stage and cause. */
    public static String deadLettersKey(DeadLetter.Stage stage, DeadLetter.Cause cause) {
        return DEAD_LETTERS + "/" + stage.wireName() + "/" + cause.wireName();
    }

    /**
     * Publishes a total that {@code owner} (a stream task: its id and store) keeps in a store of its own and has just
     * written. Each owner's totals are series of their own (tag {@code task}): a task's series only grows while the
     * task lives on this instance, and a task that moves starts a new series on the instance it moves to, which
     * Prometheus counts from there; summed over tasks and instances, the totals are exact.
     */
    public void total(String owner, String key, long value) {
        totals.total(owner, key, value);
    }

    /** Takes the series of {@code owner} away: its task closed here (its totals stay in its store). */
    public void forgetTotals(String owner) {
        totals.forgetTotals(owner);
    }

    public void passages(PassageOp op, int n) {
        ingest.passages(op, n);
    }

    /**
     * Counts a dead letter sent outside a stream step's store (the mirror sink, the stream's error handlers): in this
     * process's memory only.
     */
    public void deadLetter(DeadLetter.Stage stage, DeadLetter.Cause cause) {
        totals.deadLetter(stage, cause);
    }

    public void understood(String extractor, Duration took) {
        ingest.understood(extractor, took);
    }

    /** Counts a passage put back to wait after a transient failure of its remote model. */
    public void understandRetry() {
        ingest.understandRetry();
    }

    /**
     * The gauge of passages the understand tasks hold — for a remote model, or set aside for their namespace's turn —
     * read from {@code state} whenever scraped.
     */
    public <T> void understandPending(T state, ToDoubleFunction<T> pending) {
        ingest.understandPending(state, pending);
    }

    /**
     * Counters of the texts the understanding embedded with its model and of those whose vector it reused (an entity or
     * fact text seen before in the namespace), read from {@code state} whenever scraped.
     */
    public <T> void embeddingTexts(T state, ToDoubleFunction<T> embedded, ToDoubleFunction<T> reused) {
        ingest.embeddingTexts(state, embedded, reused);
    }

    public void extractionCache(boolean hit) {
        ingest.extractionCache(hit ? CacheResult.HIT : CacheResult.MISS);
    }

    /** A record of the extraction cache's topic that is no extraction was skipped. */
    public void extractionCacheInvalid() {
        ingest.extractionCache(CacheResult.INVALID);
    }

    /** Records the tokens an extraction cost, when it came from an LLM. */
    public void extractionUsage(String namespace, Extraction extraction) {
        if (extraction.model() != null) {
            llmUsage(namespace, extraction.model(), extraction.usage());
        }
    }

    /** Records tokens of {@code model} spent for a namespace, and their cost. */
    public void llmUsage(String namespace, String model, Extraction.TokenUsage usage) {
        llm.llmUsage(namespace, model, usage);
    }

    /**
     * Counts a passage the construction agent worked on: {@code outcome} {@code agent} when its construction stood,
     * else the reason it fell back to the deterministic one; and the rounds it took.
     */
    public void agentPassage(String namespace, String outcome, int rounds) {
        llm.agentPassage(namespace, outcome, rounds);
    }

    /** Counts one tool call of the construction agent: {@code ok}, {@code error} (refused by the tool) or {@code malformed}. */
    public void agentToolCall(String tool, String outcome) {
        llm.agentToolCall(tool, outcome);
    }

    /** Counts one LLM call by its outcome. */
    public void llmCall(String model, String outcome) {
        llm.llmCall(model, outcome);
    }

    public void rejected(RejectedKind kind) {
        memory.rejected(kind);
    }

    public void memoryChange(MemoryChange.Type type) {
        memory.memoryChange(type);
    }

    public void stale(StaleKind kind) {
        memory.stale(kind);
    }

    public void resolution(MemoryChange.EntityDecision.Kind decision) {
        memory.resolution(decision);
    }

    public void blockSkipped() {
        memory.blockSkipped();
    }

    // ---- mirrors ---------------------------------------------------------------------------------------------------

    public void mirrorRecord(MirrorOp op) {
        mirrors.mirrorRecord(op);
    }

    /** One batch written to a mirror: its size, how long it took and whether it succeeded. */
    public void sinkWrite(Sink sink, int records, boolean ok, Duration took) {
        mirrors.sinkWrite(sink, records, ok, took);
    }

    public void sinkRecords(Sink sink, SinkRecordOutcome outcome, int n) {
        mirrors.sinkRecords(sink, outcome, n);
    }

    public void sinkRetry(Sink sink) {
        mirrors.sinkRetry(sink);
    }

    public void sinkPause(Sink sink) {
        mirrors.sinkPause(sink);
    }

    public void sinkCompensation(Sink sink, CompensationOutcome outcome) {
        mirrors.sinkCompensation(sink, outcome);
    }

    /** Gauges of a sink's state, read from {@code state} whenever scraped. */
    public <T> void sinkGauges(
            Sink sink,
            T state,
            ToDoubleFunction<T> paused,
            ToDoubleFunction<T> lagRecords,
            ToDoubleFunction<T> lagSeconds) {
        mirrors.sinkGauges(sink, state, paused, lagRecords, lagSeconds);
    }

    public void drift(DriftFinding finding, long n) {
        mirrors.drift(finding, n);
    }

    public void driftRepaired(long n) {
        mirrors.driftRepaired(n);
    }

    public void mirrorHistoryGap() {
        mirrors.mirrorHistoryGap();
    }

    // ---- query side -----------------------------------------------------------------------------------------------

    public void themeSummary(ThemeSummaryKind kind) {
        query.themeSummary(kind);
    }

    /** A query snapshot was built. */
    public void snapshotBuilt(SnapshotHow how, boolean ok, Duration took) {
        query.snapshotBuilt(how, ok, took);
    }

    /** A snapshot build put {@code stores} passages read from the stores and {@code kept} ones kept from the last. */
    public void snapshotPassages(long stores, long kept) {
        query.snapshotPassages(stores, kept);
    }

    /**
     * The gauge of vectors the latest snapshots of the namespaces scan beside their HNSW graphs while the background
     * writes them into the graphs, read from {@code state} whenever scraped.
     */
    public <T> void vectorIndexWaiting(T state, ToDoubleFunction<T> waiting) {
        query.vectorIndexWaiting(state, waiting);
    }

    /**
     * The gauge of bytes of values in the namespaces' snapshot vector arenas (used and retired), read from {@code
     * state} whenever scraped.
     */
    public <T> void snapshotVectorArena(T state, ToDoubleFunction<T> bytes) {
        query.snapshotVectorArena(state, bytes);
    }

    /** A background write of snapshots' vectors into an HNSW index failed (the next snapshot writes them itself). */
    public void vectorIndexWriteFailed() {
        query.vectorIndexWriteFailed();
    }

    /** Vectors written to and deleted from an HNSW index by one write of a snapshot's changes. */
    public void vectorIndexWrites(long written, long deleted) {
        query.vectorIndexWrites(written, deleted);
    }

    public void vectorIndexUnavailable() {
        query.vectorIndexUnavailable();
    }

    public void httpRequest(String route, String method, int status, Duration took) {
        query.httpRequest(route, method, status, took);
    }

    public void retrieval(String mode, Duration took) {
        query.retrieval(mode, took);
    }

    /**
     * Sets the documents-by-status gauge to these counts (namespace → status → documents), the namespaces this instance
     * owns now; a namespace or status no longer listed leaves the gauge.
     */
    public void documentsByStatus(Map<String, Map<String, Long>> counts) {
        query.documentsByStatus(counts);
    }

    /**
     * Sets the rejected-objects gauge of one memory task ({@code owner}) to these counts by namespace; an empty map
     * removes the task's namespaces (its partition moved away).
     */
    public void mirrorRejected(String owner, Map<String, Long> byNamespace) {
        mirrors.mirrorRejected(owner, byNamespace);
    }
}
