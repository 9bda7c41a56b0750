package dev.engram.metrics;

import dev.engram.schemas.Extraction;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Every Engram meter: names, tags and units live here and nowhere else. Prometheus names are the dotted names with
 * underscores and the unit/total suffix, e.g. {@code engram.documents} → {@code engram_documents_total}.
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
    /** Extraction-cache lookups, by result: hit, miss. */
    public static final String EXTRACTION_CACHE = "engram.extraction.cache";
    /** LLM tokens spent on extraction, by namespace, model and kind (prompt, completion). */
    public static final String LLM_TOKENS = "engram.llm.tokens";
    /** Estimated LLM cost of extraction in US dollars, by namespace and model. */
    public static final String LLM_COST = "engram.llm.cost.usd";
    /** LLM calls, by model and outcome (ok, retried, failed). */
    public static final String LLM_CALLS = "engram.llm.calls";
    /** Entities and facts that failed verification (kept for review), by kind. */
    public static final String REJECTED = "engram.verify.rejected";
    /** HTTP requests, by route, method and status. */
    /** Entity-resolution pair decisions made, by decision. */
    public static final String RESOLUTION = "engram.resolution.decisions";
    /** Theme summaries written, by kind. */
    public static final String THEME_SUMMARIES = "engram.theme.summaries";
    /** Blocking-index lookups skipped because the block was too large to discriminate. */
    public static final String RESOLUTION_SKIPPED = "engram.resolution.blocks.skipped";

    /** Query snapshots built, by how (inline, background) and outcome (ok, failed); a timer. */
    public static final String SNAPSHOT_BUILDS = "engram.snapshot.builds";
    /** Vectors written to or deleted from the HNSW indexes, by op (write, delete). */
    public static final String VECTOR_INDEX_WRITES = "engram.vector.index.writes";
    /** Snapshots searched exactly because their namespace's HNSW index could not be written. */
    public static final String VECTOR_INDEX_UNAVAILABLE = "engram.vector.index.unavailable";

    public static final String HTTP_REQUESTS = "engram.http.requests";
    /** Retrievals served, by mode. */
    public static final String RETRIEVALS = "engram.retrievals";

    private final MeterRegistry registry;

    public Meters(MeterRegistry registry) {
        this.registry = registry;
        // Counters exist from the start at zero, so rates and alerts work before the first event.
        for (String outcome : List.of("upserted", "unchanged", "deleted", "unknown_delete", "dead_lettered")) {
            counter(DOCUMENTS, "Documents read from the documents topic, by outcome", "outcome", outcome);
        }
        for (String op : List.of("upsert", "retract")) {
            counter(PASSAGES, "Passage events emitted by the read step", "op", op);
        }
        for (String cause : List.of(
                "malformed_json", "schema", "invalid_utf8", "too_large", "key_mismatch", "null_value", "error")) {
            deadLetterCounter("read", cause);
        }
        deadLetterCounter("understand", "extractor_error");
        deadLetterCounter("understand", "error");
        for (String result : List.of("hit", "miss")) {
            counter(EXTRACTION_CACHE, "Extraction-cache lookups", "result", result);
        }
        deadLetterCounter("construct", "error");
        deadLetterCounter("construct", "bad_command");
        for (String kind : List.of("entity", "fact")) {
            counter(REJECTED, "Entities and facts that failed verification, kept for review", "kind", kind);
        }
        for (String kind : List.of("passage", "manifest")) {
            counter(STALE, "Memory-step inputs superseded by a newer document version", "kind", kind);
        }
        for (String type : List.of(
                "passage_added",
                "passage_removed",
                "entity_created",
                "entity_removed",
                "link_added",
                "link_removed",
                "document_status",
                "entity_decision")) {
            counter(MEMORY_CHANGES, "Memory changes emitted, by type", "type", type);
        }
        for (String decision : List.of("merge", "unmerge", "review", "defer", "cleared", "update")) {
            counter(RESOLUTION, "Entity-resolution decisions, by decision", "decision", decision);
        }
        Counter.builder(RESOLUTION_SKIPPED)
                .description("Blocking-index blocks too large to discriminate, skipped during entity search")
                .register(registry);
        for (String kind : List.of("extractive", "abstractive", "failed")) {
            counter(THEME_SUMMARIES, "Eigen-theme summaries written, by kind", "kind", kind);
        }
        for (String how : List.of("inline", "background")) {
            for (String outcome : List.of("ok", "failed")) {
                snapshotTimer(how, outcome);
            }
        }
        for (String op : List.of("write", "delete")) {
            vectorIndexCounter(op);
        }
        unavailableCounter();
    }

    private Counter vectorIndexCounter(String op) {
        return counter(VECTOR_INDEX_WRITES, "Vectors written to or deleted from the HNSW indexes", "op", op);
    }

    private Counter unavailableCounter() {
        return Counter.builder(VECTOR_INDEX_UNAVAILABLE)
                .description("Snapshots searched exactly because their HNSW index could not be written")
                .register(registry);
    }

    private Timer snapshotTimer(String how, String outcome) {
        return Timer.builder(SNAPSHOT_BUILDS)
                .description("Query snapshots built from the state stores")
                .tag("how", how)
                .tag("outcome", outcome)
                .register(registry);
    }

    /** A query snapshot was built ({@code how}: inline or background). */
    public void snapshotBuilt(String how, boolean ok, Duration took) {
        snapshotTimer(how, ok ? "ok" : "failed").record(took);
    }

    /** Vectors written to and deleted from an HNSW index by one snapshot. */
    public void vectorIndexWrites(long written, long deleted) {
        vectorIndexCounter("write").increment(written);
        vectorIndexCounter("delete").increment(deleted);
    }

    public void vectorIndexUnavailable() {
        unavailableCounter().increment();
    }

    public void themeSummary(String kind) {
        counter(THEME_SUMMARIES, "Eigen-theme summaries written, by kind", "kind", kind)
                .increment();
    }

    public void resolution(String decision) {
        counter(RESOLUTION, "Entity-resolution decisions, by decision", "decision", decision)
                .increment();
    }

    public void blockSkipped() {
        Counter.builder(RESOLUTION_SKIPPED)
                .description("Blocking-index blocks too large to discriminate, skipped during entity search")
                .register(registry)
                .increment();
    }

    private Counter counter(String name, String description, String tag, String value) {
        return Counter.builder(name).description(description).tag(tag, value).register(registry);
    }

    private Counter deadLetterCounter(String stage, String cause) {
        return Counter.builder(DEAD_LETTERS)
                .description("Records sent to the dead-letter topic")
                .tag("stage", stage)
                .tag("cause", cause)
                .register(registry);
    }

    /** Meters that record into a private registry, for tests and tools that do not export metrics. */
    public static Meters detached() {
        return new Meters(new SimpleMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void document(String outcome) {
        counter(DOCUMENTS, "Documents read from the documents topic, by outcome", "outcome", outcome)
                .increment();
    }

    public void passages(String op, int n) {
        counter(PASSAGES, "Passage events emitted by the read step", "op", op).increment(n);
    }

    public void deadLetter(String stage, String cause) {
        deadLetterCounter(stage, cause).increment();
    }

    public void understood(String extractor, Duration took) {
        Timer.builder(UNDERSTAND)
                .description("Time to understand one passage")
                .tag("extractor", extractor)
                .register(registry)
                .record(took);
    }

    public void extractionCache(boolean hit) {
        counter(EXTRACTION_CACHE, "Extraction-cache lookups", "result", hit ? "hit" : "miss")
                .increment();
    }

    /** Records the tokens an extraction cost, when it came from an LLM. */
    public void extractionUsage(String namespace, Extraction extraction) {
        if (extraction.model() == null) {
            return;
        }
        for (String kind : List.of("prompt", "completion")) {
            long n = kind.equals("prompt")
                    ? extraction.usage().prompt()
                    : extraction.usage().completion();
            Counter.builder(LLM_TOKENS)
                    .description("LLM tokens spent on extraction")
                    .tag("namespace", namespace)
                    .tag("model", extraction.model())
                    .tag("kind", kind)
                    .register(registry)
                    .increment(n);
        }
        Counter.builder(LLM_COST)
                .description("Estimated LLM cost of extraction in US dollars, at the configured prices")
                .tag("namespace", namespace)
                .tag("model", extraction.model())
                .register(registry)
                .increment(extraction.usage().costUsd());
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

    public void rejected(String kind) {
        counter(REJECTED, "Entities and facts that failed verification, kept for review", "kind", kind)
                .increment();
    }

    public void memoryChange(String type) {
        counter(MEMORY_CHANGES, "Memory changes emitted, by type", "type", type).increment();
    }

    public void stale(String kind) {
        counter(STALE, "Memory-step inputs superseded by a newer document version", "kind", kind)
                .increment();
    }

    public void httpRequest(String route, String method, int status, Duration took) {
        Timer.builder(HTTP_REQUESTS)
                .description("HTTP requests served")
                .tag("route", route)
                .tag("method", method.toUpperCase(Locale.ROOT))
                .tag("status", Integer.toString(status))
                .register(registry)
                .record(took);
    }

    public void retrieval(String mode, Duration took) {
        Timer.builder(RETRIEVALS)
                .description("Retrievals served from this instance's stores")
                .tag("mode", mode)
                .register(registry)
                .record(took);
    }
}
