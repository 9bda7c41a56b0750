package dev.engram.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The meters of the query side: theme summaries, query snapshots and their HNSW indexes, HTTP requests, retrievals
 * and the documents by status of the namespaces this instance owns.
 */
final class QueryMeters extends AreaMeters {

    /** Histogram buckets of request and retrieval latency: enough for p50/p95/p99, few enough per route. */
    private static final Duration[] REQUEST_BUCKETS =
            durations(5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000);

    private enum VectorIndexOp implements Meters.TagValue {
        WRITE,
        DELETE
    }

    private final MultiGauge documentsByStatus;

    QueryMeters(MeterRegistry registry) {
        super(registry);
        this.documentsByStatus = MultiGauge.builder(Meters.DOCUMENTS_BY_STATUS)
                .description("Documents in memory by namespace and status, for the namespaces this instance owns")
                .register(registry);
        // Counters exist from the start at zero, so rates and alerts work before the first event.
        for (Meters.ThemeSummaryKind kind : Meters.ThemeSummaryKind.values()) {
            themeSummaryCounter(kind.tag());
        }
        for (Meters.SnapshotHow how : Meters.SnapshotHow.values()) {
            for (Outcome outcome : Outcome.values()) {
                snapshotTimer(how.tag(), outcome);
            }
        }
        for (Meters.SnapshotSource source : Meters.SnapshotSource.values()) {
            snapshotPassageCounter(source);
        }
        for (VectorIndexOp op : VectorIndexOp.values()) {
            vectorIndexCounter(op);
        }
        unavailableCounter();
    }

    void themeSummary(Meters.ThemeSummaryKind kind) {
        themeSummaryCounter(kind.tag()).increment();
    }

    void snapshotBuilt(Meters.SnapshotHow how, boolean ok, Duration took) {
        snapshotTimer(how.tag(), ok ? Outcome.OK : Outcome.FAILED).record(took);
    }

    void snapshotPassages(long stores, long kept) {
        snapshotPassageCounter(Meters.SnapshotSource.STORES).increment(stores);
        snapshotPassageCounter(Meters.SnapshotSource.KEPT).increment(kept);
    }

    <T> void vectorIndexWaiting(T state, ToDoubleFunction<T> waiting) {
        Gauge.builder(Meters.VECTOR_INDEX_WAITING, state, waiting)
                .description("Vectors the latest query snapshots scan beside their HNSW graphs until they are written")
                .register(registry);
        writeFailureCounter(); // exported from the start, at zero
    }

    <T> void snapshotVectorArena(T state, ToDoubleFunction<T> bytes) {
        Gauge.builder(Meters.SNAPSHOT_VECTOR_ARENA, state, bytes)
                .description("Bytes of values in the namespaces' snapshot vector arenas, used and retired")
                .baseUnit("bytes")
                .register(registry);
    }

    void vectorIndexWriteFailed() {
        writeFailureCounter().increment();
    }

    void vectorIndexWrites(long written, long deleted) {
        vectorIndexCounter(VectorIndexOp.WRITE).increment(written);
        vectorIndexCounter(VectorIndexOp.DELETE).increment(deleted);
    }

    void vectorIndexUnavailable() {
        unavailableCounter().increment();
    }

    void httpRequest(String route, String method, int status, Duration took) {
        Timer.builder(Meters.HTTP_REQUESTS)
                .description("HTTP requests served")
                .tag("route", route)
                .tag("method", method.toUpperCase(Locale.ROOT))
                .tag("status", Integer.toString(status))
                .serviceLevelObjectives(REQUEST_BUCKETS)
                .register(registry)
                .record(took);
    }

    void retrieval(String mode, Duration took) {
        Timer.builder(Meters.RETRIEVALS)
                .description("Retrievals served from this instance's stores")
                .tag("mode", mode)
                .serviceLevelObjectives(REQUEST_BUCKETS)
                .register(registry)
                .record(took);
    }

    void documentsByStatus(Map<String, Map<String, Long>> counts) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        counts.forEach((namespace, byStatus) -> byStatus.forEach((status, n) -> rows.add(
                MultiGauge.Row.of(Tags.of("namespace", namespace, "status", status.toLowerCase(Locale.ROOT)), n))));
        documentsByStatus.register(rows, true);
    }

    private Counter writeFailureCounter() {
        return Counter.builder(Meters.VECTOR_INDEX_WRITE_FAILURES)
                .description("Background writes into the HNSW indexes that failed; the next snapshot writes itself")
                .register(registry);
    }

    private Counter themeSummaryCounter(String kind) {
        return counter(Meters.THEME_SUMMARIES, "Eigen-theme summaries written, by kind", "kind", kind);
    }

    private Timer snapshotTimer(String how, Outcome outcome) {
        return Timer.builder(Meters.SNAPSHOT_BUILDS)
                .description("Query snapshots built from the state stores")
                .tag("how", how)
                .tag("outcome", outcome.tag())
                .register(registry);
    }

    private Counter snapshotPassageCounter(Meters.SnapshotSource source) {
        return counter(
                Meters.SNAPSHOT_PASSAGES,
                "Passages put into query snapshots, read from the stores or kept from the last snapshot",
                "source",
                source.tag());
    }

    private Counter vectorIndexCounter(VectorIndexOp op) {
        return counter(
                Meters.VECTOR_INDEX_WRITES, "Vectors written to or deleted from the HNSW indexes", "op", op.tag());
    }

    private Counter unavailableCounter() {
        return Counter.builder(Meters.VECTOR_INDEX_UNAVAILABLE)
                .description("Snapshots searched exactly because their HNSW index could not be written")
                .register(registry);
    }
}
