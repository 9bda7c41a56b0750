package dev.engram.metrics;

import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
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

    /** Histogram buckets of request and retrieval latency: enough for p50/p95/p99, few enough per route. */
    private static final Duration[] REQUEST_BUCKETS =
            durations(5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000);
    /** Histogram buckets of understanding one passage: a local model takes milliseconds, an LLM seconds. */
    private static final Duration[] UNDERSTAND_BUCKETS =
            durations(10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000);

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
        BACKGROUND
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

    private enum Outcome implements TagValue {
        OK,
        FAILED
    }

    private enum VectorIndexOp implements TagValue {
        WRITE,
        DELETE
    }

    private enum TokenKind implements TagValue {
        PROMPT,
        COMPLETION
    }

    private final MeterRegistry registry;
    private final MultiGauge documentsByStatus;
    private final MultiGauge mirrorRejected;
    /** The totals of documents and dead letters: owner (a stream task, or this process) → key → total. */
    private final Map<String, Map<String, AtomicLong>> totals = new ConcurrentHashMap<>();
    /** The counters of each owner's totals, taken away with it. */
    private final Map<String, List<Meter>> totalMeters = new ConcurrentHashMap<>();
    /** The owner of totals counted in this process's memory only (the mirror sink, the stream's error handlers). */
    private static final String IN_MEMORY = "process";
    /** Per memory task, its rejected objects by namespace (a namespace lives on one task). */
    private final Map<String, Map<String, Long>> rejectedByTask = new ConcurrentHashMap<>();

    public Meters(MeterRegistry registry) {
        this.registry = registry;
        this.mirrorRejected = MultiGauge.builder(MIRROR_REJECTED)
                .description("Objects a mirror rejected that the repair loop re-emits until a mirror takes them,"
                        + " by namespace")
                .register(registry);
        this.documentsByStatus = MultiGauge.builder(DOCUMENTS_BY_STATUS)
                .description("Documents in memory by namespace and status, for the namespaces this instance owns")
                .register(registry);
        // Counters exist from the start at zero, so rates and alerts work before the first event.
        for (DocumentOutcome outcome : DocumentOutcome.values()) {
            series(IN_MEMORY, documentsKey(outcome));
        }
        for (PassageOp op : PassageOp.values()) {
            passageCounter(op);
        }
        for (DeadLetter.Cause cause : DeadLetter.Cause.values()) {
            for (DeadLetter.Stage stage : cause.stages()) {
                deadLetterCounter(stage.wireName(), cause.wireName());
            }
        }
        for (CacheResult result : CacheResult.values()) {
            cacheCounter(result);
        }
        for (RejectedKind kind : RejectedKind.values()) {
            rejectedCounter(kind);
        }
        for (StaleKind kind : StaleKind.values()) {
            staleCounter(kind);
        }
        for (MemoryChange.Type type : MemoryChange.Type.values()) {
            memoryChangeCounter(type);
        }
        for (MemoryChange.EntityDecision.Kind decision : MemoryChange.EntityDecision.Kind.values()) {
            resolutionCounter(decision);
        }
        skippedCounter();
        for (ThemeSummaryKind kind : ThemeSummaryKind.values()) {
            themeSummaryCounter(kind.tag());
        }
        for (SnapshotHow how : SnapshotHow.values()) {
            for (Outcome outcome : Outcome.values()) {
                snapshotTimer(how.tag(), outcome);
            }
        }
        for (SnapshotSource source : SnapshotSource.values()) {
            snapshotPassageCounter(source);
        }
        for (VectorIndexOp op : VectorIndexOp.values()) {
            vectorIndexCounter(op);
        }
        unavailableCounter();
        for (MirrorOp op : MirrorOp.values()) {
            mirrorCounter(op);
        }
        for (DriftFinding finding : DriftFinding.values()) {
            driftCounter(finding);
        }
        driftRepairedCounter();
        historyGapCounter();
        retryCounter();
    }

    /** Registers the meters of a sink at zero, so that its rates and alerts work before the first write. */
    public void registerSink(Sink sink) {
        for (SinkRecordOutcome outcome : SinkRecordOutcome.values()) {
            sinkRecordCounter(sink, outcome);
        }
        for (Outcome outcome : Outcome.values()) {
            sinkTimer(sink, outcome);
        }
        sinkBatch(sink);
        sinkCounter(SINK_RETRIES, "Transient mirror failures retried", sink);
        sinkCounter(SINK_PAUSES, "Times a sink paused after transient failures outlasted its retries", sink);
        for (CompensationOutcome outcome : CompensationOutcome.values()) {
            compensationCounter(sink, outcome);
        }
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
        series(owner, key).set(value);
    }

    /** Takes the series of {@code owner} away: its task closed here (its totals stay in its store). */
    public void forgetTotals(String owner) {
        Map<String, AtomicLong> gone = totals.remove(owner);
        List<Meter> meters = totalMeters.remove(owner);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
        if (gone != null) {
            gone.clear();
        }
    }

    /** The total of {@code owner} under {@code key}, registered as a counter the first time. */
    private AtomicLong series(String owner, String key) {
        return totals.computeIfAbsent(owner, o -> new ConcurrentHashMap<>()).computeIfAbsent(key, k -> {
            AtomicLong value = new AtomicLong();
            String[] parts = k.split("/");
            FunctionCounter.Builder<AtomicLong> b = parts[0].equals(DOCUMENTS)
                    ? FunctionCounter.builder(DOCUMENTS, value, AtomicLong::get)
                            .description("Documents read from the documents topic, by outcome, as committed with"
                                    + " the read step's output (kept in its store per task)")
                            .tag("outcome", parts[1])
                    : FunctionCounter.builder(DEAD_LETTERS, value, AtomicLong::get)
                            .description("Records sent to the dead-letter topic (those of the stream steps as"
                                    + " committed with their output, kept in their stores per task)")
                            .tag("stage", parts[1])
                            .tag("cause", parts[2]);
            Meter m = b.tag("task", owner).register(registry);
            totalMeters
                    .computeIfAbsent(owner, o -> new CopyOnWriteArrayList<>())
                    .add(m);
            return value;
        });
    }

    public void passages(PassageOp op, int n) {
        passageCounter(op).increment(n);
    }

    /**
     * Counts a dead letter sent outside a stream step's store (the mirror sink, the stream's error handlers): in this
     * process's memory only.
     */
    public void deadLetter(DeadLetter.Stage stage, DeadLetter.Cause cause) {
        series(IN_MEMORY, deadLettersKey(stage, cause)).incrementAndGet();
    }

    public void understood(String extractor, Duration took) {
        Timer.builder(UNDERSTAND)
                .description("Time to understand one passage")
                .tag("extractor", extractor)
                .serviceLevelObjectives(UNDERSTAND_BUCKETS)
                .register(registry)
                .record(took);
    }

    /** Counts a passage put back to wait after a transient failure of its remote model. */
    public void understandRetry() {
        retryCounter().increment();
    }

    /**
     * The gauge of passages the understand tasks hold — for a remote model, or set aside for their namespace's turn —
     * read from {@code state} whenever scraped.
     */
    public <T> void understandPending(T state, ToDoubleFunction<T> pending) {
        Gauge.builder(UNDERSTAND_PENDING, state, pending)
                .description(
                        "Passages held by this instance's understand tasks: for a remote model, or set aside for their"
                                + " namespace's turn")
                .register(registry);
    }

    /**
     * Counters of the texts the understanding embedded with its model and of those whose vector it reused (an entity or
     * fact text seen before in the namespace), read from {@code state} whenever scraped.
     */
    public <T> void embeddingTexts(T state, ToDoubleFunction<T> embedded, ToDoubleFunction<T> reused) {
        FunctionCounter.builder(EMBEDDING_TEXTS, state, embedded)
                .description("Texts the understanding embedded, by where their vector came from")
                .tag("source", "model")
                .register(registry);
        FunctionCounter.builder(EMBEDDING_TEXTS, state, reused)
                .description("Texts the understanding embedded, by where their vector came from")
                .tag("source", "reused")
                .register(registry);
    }

    public void extractionCache(boolean hit) {
        cacheCounter(hit ? CacheResult.HIT : CacheResult.MISS).increment();
    }

    /** A record of the extraction cache's topic that is no extraction was skipped. */
    public void extractionCacheInvalid() {
        cacheCounter(CacheResult.INVALID).increment();
    }

    /** Records the tokens an extraction cost, when it came from an LLM. */
    public void extractionUsage(String namespace, Extraction extraction) {
        if (extraction.model() != null) {
            llmUsage(namespace, extraction.model(), extraction.usage());
        }
    }

    /** Records tokens of {@code model} spent for a namespace, and their cost. */
    public void llmUsage(String namespace, String model, Extraction.TokenUsage usage) {
        for (TokenKind kind : TokenKind.values()) {
            long n = kind == TokenKind.PROMPT ? usage.prompt() : usage.completion();
            Counter.builder(LLM_TOKENS)
                    .description("LLM tokens spent on extraction and the agent construction")
                    .tag("namespace", namespace)
                    .tag("model", model)
                    .tag("kind", kind.tag())
                    .register(registry)
                    .increment(n);
        }
        Counter.builder(LLM_COST)
                .description(
                        "Estimated LLM cost of extraction and the agent construction in US dollars, at the configured prices")
                .tag("namespace", namespace)
                .tag("model", model)
                .register(registry)
                .increment(usage.costUsd());
    }

    /**
     * Counts a passage the construction agent worked on: {@code outcome} {@code agent} when its construction stood,
     * else the reason it fell back to the deterministic one; and the rounds it took.
     */
    public void agentPassage(String namespace, String outcome, int rounds) {
        Counter.builder(AGENT_PASSAGES)
                .description("Passages the construction agent worked on, by outcome")
                .tag("namespace", namespace)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
        DistributionSummary.builder(AGENT_ROUNDS)
                .description("Tool-calling rounds per passage of the construction agent")
                .tag("namespace", namespace)
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32)
                .register(registry)
                .record(rounds);
    }

    /** Counts one tool call of the construction agent: {@code ok}, {@code error} (refused by the tool) or {@code malformed}. */
    public void agentToolCall(String tool, String outcome) {
        Counter.builder(AGENT_TOOL_CALLS)
                .description("Tool calls of the construction agent, by tool and outcome")
                .tag("tool", tool)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    /** Counts one LLM call by its outcome. */
    public void llmCall(String model, String outcome) {
        Counter.builder(LLM_CALLS)
                .description("LLM calls by outcome")
                .tag("model", model)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    public void rejected(RejectedKind kind) {
        rejectedCounter(kind).increment();
    }

    public void memoryChange(MemoryChange.Type type) {
        memoryChangeCounter(type).increment();
    }

    public void stale(StaleKind kind) {
        staleCounter(kind).increment();
    }

    public void resolution(MemoryChange.EntityDecision.Kind decision) {
        resolutionCounter(decision).increment();
    }

    public void blockSkipped() {
        skippedCounter().increment();
    }

    // ---- mirrors ---------------------------------------------------------------------------------------------------

    public void mirrorRecord(MirrorOp op) {
        mirrorCounter(op).increment();
    }

    /** One batch written to a mirror: its size, how long it took and whether it succeeded. */
    public void sinkWrite(Sink sink, int records, boolean ok, Duration took) {
        sinkTimer(sink, ok ? Outcome.OK : Outcome.FAILED).record(took);
        if (ok) {
            sinkBatch(sink).record(records);
        }
    }

    public void sinkRecords(Sink sink, SinkRecordOutcome outcome, int n) {
        sinkRecordCounter(sink, outcome).increment(n);
    }

    public void sinkRetry(Sink sink) {
        sinkCounter(SINK_RETRIES, "Transient mirror failures retried", sink).increment();
    }

    public void sinkPause(Sink sink) {
        sinkCounter(SINK_PAUSES, "Times a sink paused after transient failures outlasted its retries", sink)
                .increment();
    }

    public void sinkCompensation(Sink sink, CompensationOutcome outcome) {
        compensationCounter(sink, outcome).increment();
    }

    /** Gauges of a sink's state, read from {@code state} whenever scraped. */
    public <T> void sinkGauges(
            Sink sink,
            T state,
            ToDoubleFunction<T> paused,
            ToDoubleFunction<T> lagRecords,
            ToDoubleFunction<T> lagSeconds) {
        Gauge.builder(SINK_PAUSED, state, paused)
                .description("1 while the sink is paused after transient failures")
                .tag("sink", sink.tag())
                .register(registry);
        Gauge.builder(SINK_LAG_RECORDS, state, lagRecords)
                .description("Mirror records not yet applied by this instance's sink")
                .tag("sink", sink.tag())
                .register(registry);
        Gauge.builder(SINK_LAG_SECONDS, state, lagSeconds)
                .description("Age of the oldest mirror record this instance's sink has not applied")
                .tag("sink", sink.tag())
                .baseUnit("seconds")
                .register(registry);
    }

    public void drift(DriftFinding finding, long n) {
        driftCounter(finding).increment(n);
    }

    public void driftRepaired(long n) {
        driftRepairedCounter().increment(n);
    }

    public void mirrorHistoryGap() {
        historyGapCounter().increment();
    }

    // ---- query side -----------------------------------------------------------------------------------------------

    public void themeSummary(ThemeSummaryKind kind) {
        themeSummaryCounter(kind.tag()).increment();
    }

    /** A query snapshot was built. */
    public void snapshotBuilt(SnapshotHow how, boolean ok, Duration took) {
        snapshotTimer(how.tag(), ok ? Outcome.OK : Outcome.FAILED).record(took);
    }

    /** A snapshot build put {@code stores} passages read from the stores and {@code kept} ones kept from the last. */
    public void snapshotPassages(long stores, long kept) {
        snapshotPassageCounter(SnapshotSource.STORES).increment(stores);
        snapshotPassageCounter(SnapshotSource.KEPT).increment(kept);
    }

    /**
     * The gauge of vectors the latest snapshots of the namespaces scan beside their HNSW graphs while the background
     * writes them into the graphs, read from {@code state} whenever scraped.
     */
    public <T> void vectorIndexWaiting(T state, ToDoubleFunction<T> waiting) {
        Gauge.builder(VECTOR_INDEX_WAITING, state, waiting)
                .description("Vectors the latest query snapshots scan beside their HNSW graphs until they are written")
                .register(registry);
        writeFailureCounter(); // exported from the start, at zero
    }

    /** A background write of snapshots' vectors into an HNSW index failed (the next snapshot writes them itself). */
    public void vectorIndexWriteFailed() {
        writeFailureCounter().increment();
    }

    private Counter writeFailureCounter() {
        return Counter.builder(VECTOR_INDEX_WRITE_FAILURES)
                .description("Background writes into the HNSW indexes that failed; the next snapshot writes itself")
                .register(registry);
    }

    /** Vectors written to and deleted from an HNSW index by one write of a snapshot's changes. */
    public void vectorIndexWrites(long written, long deleted) {
        vectorIndexCounter(VectorIndexOp.WRITE).increment(written);
        vectorIndexCounter(VectorIndexOp.DELETE).increment(deleted);
    }

    public void vectorIndexUnavailable() {
        unavailableCounter().increment();
    }

    public void httpRequest(String route, String method, int status, Duration took) {
        Timer.builder(HTTP_REQUESTS)
                .description("HTTP requests served")
                .tag("route", route)
                .tag("method", method.toUpperCase(Locale.ROOT))
                .tag("status", Integer.toString(status))
                .serviceLevelObjectives(REQUEST_BUCKETS)
                .register(registry)
                .record(took);
    }

    public void retrieval(String mode, Duration took) {
        Timer.builder(RETRIEVALS)
                .description("Retrievals served from this instance's stores")
                .tag("mode", mode)
                .serviceLevelObjectives(REQUEST_BUCKETS)
                .register(registry)
                .record(took);
    }

    /**
     * Sets the documents-by-status gauge to these counts (namespace → status → documents), the namespaces this instance
     * owns now; a namespace or status no longer listed leaves the gauge.
     */
    public void documentsByStatus(Map<String, Map<String, Long>> counts) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        counts.forEach((namespace, byStatus) -> byStatus.forEach((status, n) -> rows.add(
                MultiGauge.Row.of(Tags.of("namespace", namespace, "status", status.toLowerCase(Locale.ROOT)), n))));
        documentsByStatus.register(rows, true);
    }

    /**
     * Sets the rejected-objects gauge of one memory task ({@code owner}) to these counts by namespace; an empty map
     * removes the task's namespaces (its partition moved away).
     */
    public synchronized void mirrorRejected(String owner, Map<String, Long> byNamespace) {
        if (byNamespace.isEmpty()) {
            rejectedByTask.remove(owner);
        } else {
            rejectedByTask.put(owner, Map.copyOf(byNamespace));
        }
        Map<String, Long> all = new TreeMap<>();
        rejectedByTask.values().forEach(m -> m.forEach((ns, n) -> all.merge(ns, n, Long::sum)));
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        all.forEach((ns, n) -> rows.add(MultiGauge.Row.of(Tags.of("namespace", ns), n)));
        mirrorRejected.register(rows, true);
    }

    private static Duration[] durations(long... millis) {
        Duration[] out = new Duration[millis.length];
        for (int i = 0; i < millis.length; i++) {
            out[i] = Duration.ofMillis(millis[i]);
        }
        return out;
    }

    // ---- the meters, one builder each -----------------------------------------------------------------------------

    private Counter passageCounter(PassageOp op) {
        return counter(PASSAGES, "Passage events emitted by the read step", "op", op.tag());
    }

    private void deadLetterCounter(String stage, String cause) {
        series(IN_MEMORY, DEAD_LETTERS + "/" + stage + "/" + cause);
    }

    private Counter cacheCounter(CacheResult result) {
        return counter(
                EXTRACTION_CACHE,
                "Extraction-cache lookups (hit, miss), and records of its topic that are no extraction (invalid)",
                "result",
                result.tag());
    }

    private Counter rejectedCounter(RejectedKind kind) {
        return counter(REJECTED, "Entities and facts that failed verification, kept for review", "kind", kind.tag());
    }

    private Counter staleCounter(StaleKind kind) {
        return counter(STALE, "Memory-step inputs superseded by a newer document version", "kind", kind.tag());
    }

    private Counter memoryChangeCounter(MemoryChange.Type type) {
        return counter(MEMORY_CHANGES, "Memory changes emitted, by type", "type", type.wireName());
    }

    private Counter resolutionCounter(MemoryChange.EntityDecision.Kind decision) {
        return counter(RESOLUTION, "Entity-resolution decisions, by decision", "decision", decision.wireName());
    }

    private Counter skippedCounter() {
        return Counter.builder(RESOLUTION_SKIPPED)
                .description("Blocking-index blocks too large to discriminate, skipped during entity search")
                .register(registry);
    }

    private Counter themeSummaryCounter(String kind) {
        return counter(THEME_SUMMARIES, "Eigen-theme summaries written, by kind", "kind", kind);
    }

    private Timer snapshotTimer(String how, Outcome outcome) {
        return Timer.builder(SNAPSHOT_BUILDS)
                .description("Query snapshots built from the state stores")
                .tag("how", how)
                .tag("outcome", outcome.tag())
                .register(registry);
    }

    private Counter snapshotPassageCounter(SnapshotSource source) {
        return counter(
                SNAPSHOT_PASSAGES,
                "Passages put into query snapshots, read from the stores or kept from the last snapshot",
                "source",
                source.tag());
    }

    private Counter vectorIndexCounter(VectorIndexOp op) {
        return counter(VECTOR_INDEX_WRITES, "Vectors written to or deleted from the HNSW indexes", "op", op.tag());
    }

    private Counter unavailableCounter() {
        return Counter.builder(VECTOR_INDEX_UNAVAILABLE)
                .description("Snapshots searched exactly because their HNSW index could not be written")
                .register(registry);
    }

    private Counter mirrorCounter(MirrorOp op) {
        return counter(MIRROR_RECORDS, "Mirror records emitted by the memory step, by op", "op", op.tag());
    }

    private Counter sinkRecordCounter(Sink sink, SinkRecordOutcome outcome) {
        return Counter.builder(SINK_RECORDS)
                .description("Mirror records handled by a sink, by outcome")
                .tag("sink", sink.tag())
                .tag("outcome", outcome.tag())
                .register(registry);
    }

    private Timer sinkTimer(Sink sink, Outcome outcome) {
        return Timer.builder(SINK_WRITES)
                .description("Batched writes to a mirror")
                .tag("sink", sink.tag())
                .tag("outcome", outcome.tag())
                .publishPercentileHistogram()
                .register(registry);
    }

    private DistributionSummary sinkBatch(Sink sink) {
        return DistributionSummary.builder(SINK_BATCH)
                .description("Records per batch written to a mirror")
                .tag("sink", sink.tag())
                .register(registry);
    }

    private Counter sinkCounter(String name, String description, Sink sink) {
        return counter(name, description, "sink", sink.tag());
    }

    private Counter compensationCounter(Sink sink, CompensationOutcome outcome) {
        return Counter.builder(SINK_COMPENSATIONS)
                .description("Compensation events written by a sink, by outcome")
                .tag("sink", sink.tag())
                .tag("outcome", outcome.tag())
                .register(registry);
    }

    private Counter driftCounter(DriftFinding finding) {
        return counter(MIRROR_DRIFT, "Objects the consistency check found drifting", "finding", finding.tag());
    }

    private Counter retryCounter() {
        return Counter.builder(UNDERSTAND_RETRIES)
                .description("Passages put back to wait after a transient failure of their remote model")
                .register(registry);
    }

    private Counter historyGapCounter() {
        return Counter.builder(MIRROR_HISTORY_GAPS)
                .description("Mirror topic partitions whose unapplied history retention had already deleted")
                .register(registry);
    }

    private Counter driftRepairedCounter() {
        return Counter.builder(MIRROR_DRIFT_REPAIRED)
                .description("Drifting objects sent for repair by the consistency repair")
                .register(registry);
    }

    private Counter counter(String name, String description, String tag, String value) {
        return Counter.builder(name).description(description).tag(tag, value).register(registry);
    }
}
