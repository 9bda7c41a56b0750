package dev.engram.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * The meters of the mirrors: the records the memory step emits for them, the sinks' writes, retries, pauses, lag and
 * compensations, the objects they rejected, and the drift the consistency check finds and repairs.
 */
final class MirrorMeters extends AreaMeters {

    private static final String RETRIES_DESCRIPTION = "Transient mirror failures retried";
    private static final String PAUSES_DESCRIPTION =
            "Times a sink paused after transient failures outlasted its retries";

    private final MultiGauge mirrorRejected;
    /** Per memory task, its rejected objects by namespace (a namespace lives on one task). */
    private final Map<String, Map<String, Long>> rejectedByTask = new ConcurrentHashMap<>();

    MirrorMeters(MeterRegistry registry) {
        super(registry);
        this.mirrorRejected = MultiGauge.builder(Meters.MIRROR_REJECTED)
                .description("Objects a mirror rejected that the repair loop re-emits until a mirror takes them,"
                        + " by namespace")
                .register(registry);
        // Counters exist from the start at zero, so rates and alerts work before the first event.
        for (Meters.MirrorOp op : Meters.MirrorOp.values()) {
            mirrorCounter(op);
        }
        for (Meters.DriftFinding finding : Meters.DriftFinding.values()) {
            driftCounter(finding);
        }
        driftRepairedCounter();
        historyGapCounter();
    }

    void registerSink(Meters.Sink sink) {
        for (Meters.SinkRecordOutcome outcome : Meters.SinkRecordOutcome.values()) {
            sinkRecordCounter(sink, outcome);
        }
        for (Outcome outcome : Outcome.values()) {
            sinkTimer(sink, outcome);
        }
        sinkBatch(sink);
        sinkCounter(Meters.SINK_RETRIES, RETRIES_DESCRIPTION, sink);
        sinkCounter(Meters.SINK_PAUSES, PAUSES_DESCRIPTION, sink);
        for (Meters.CompensationOutcome outcome : Meters.CompensationOutcome.values()) {
            compensationCounter(sink, outcome);
        }
    }

    void mirrorRecord(Meters.MirrorOp op) {
        mirrorCounter(op).increment();
    }

    void sinkWrite(Meters.Sink sink, int records, boolean ok, Duration took) {
        sinkTimer(sink, ok ? Outcome.OK : Outcome.FAILED).record(took);
        if (ok) {
            sinkBatch(sink).record(records);
        }
    }

    void sinkRecords(Meters.Sink sink, Meters.SinkRecordOutcome outcome, int n) {
        sinkRecordCounter(sink, outcome).increment(n);
    }

    void sinkRetry(Meters.Sink sink) {
        sinkCounter(Meters.SINK_RETRIES, RETRIES_DESCRIPTION, sink).increment();
    }

    void sinkPause(Meters.Sink sink) {
        sinkCounter(Meters.SINK_PAUSES, PAUSES_DESCRIPTION, sink).increment();
    }

    void sinkCompensation(Meters.Sink sink, Meters.CompensationOutcome outcome) {
        compensationCounter(sink, outcome).increment();
    }

    <T> void sinkGauges(
            Meters.Sink sink,
            T state,
            ToDoubleFunction<T> paused,
            ToDoubleFunction<T> lagRecords,
            ToDoubleFunction<T> lagSeconds) {
        Gauge.builder(Meters.SINK_PAUSED, state, paused)
                .description("1 while the sink is paused after transient failures")
                .tag("sink", sink.tag())
                .register(registry);
        Gauge.builder(Meters.SINK_LAG_RECORDS, state, lagRecords)
                .description("Mirror records not yet applied by this instance's sink")
                .tag("sink", sink.tag())
                .register(registry);
        Gauge.builder(Meters.SINK_LAG_SECONDS, state, lagSeconds)
                .description("Age of the oldest mirror record this instance's sink has not applied")
                .tag("sink", sink.tag())
                .baseUnit("seconds")
                .register(registry);
    }

    void drift(Meters.DriftFinding finding, long n) {
        driftCounter(finding).increment(n);
    }

    void driftRepaired(long n) {
        driftRepairedCounter().increment(n);
    }

    void mirrorHistoryGap() {
        historyGapCounter().increment();
    }

    /** Sets one memory task's rejected objects by namespace and the gauge to their sum over the tasks. */
    synchronized void mirrorRejected(String owner, Map<String, Long> byNamespace) {
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

    private Counter mirrorCounter(Meters.MirrorOp op) {
        return counter(Meters.MIRROR_RECORDS, "Mirror records emitted by the memory step, by op", "op", op.tag());
    }

    private Counter sinkRecordCounter(Meters.Sink sink, Meters.SinkRecordOutcome outcome) {
        return Counter.builder(Meters.SINK_RECORDS)
                .description("Mirror records handled by a sink, by outcome")
                .tag("sink", sink.tag())
                .tag("outcome", outcome.tag())
                .register(registry);
    }

    private Timer sinkTimer(Meters.Sink sink, Outcome outcome) {
        return Timer.builder(Meters.SINK_WRITES)
                .description("Batched writes to a mirror")
                .tag("sink", sink.tag())
                .tag("outcome", outcome.tag())
                .publishPercentileHistogram()
                .register(registry);
    }

    private DistributionSummary sinkBatch(Meters.Sink sink) {
        return DistributionSummary.builder(Meters.SINK_BATCH)
                .description("Records per batch written to a mirror")
                .tag("sink", sink.tag())
                .register(registry);
    }

    private Counter sinkCounter(String name, String description, Meters.Sink sink) {
        return counter(name, description, "sink", sink.tag());
    }

    private Counter compensationCounter(Meters.Sink sink, Meters.CompensationOutcome outcome) {
        return Counter.builder(Meters.SINK_COMPENSATIONS)
                .description("Compensation events written by a sink, by outcome")
                .tag("sink", sink.tag())
                .tag("outcome", outcome.tag())
                .register(registry);
    }

    private Counter driftCounter(Meters.DriftFinding finding) {
        return counter(Meters.MIRROR_DRIFT, "Objects the consistency check found drifting", "finding", finding.tag());
    }

    private Counter historyGapCounter() {
        return Counter.builder(Meters.MIRROR_HISTORY_GAPS)
                .description("Mirror topic partitions whose unapplied history retention had already deleted")
                .register(registry);
    }

    private Counter driftRepairedCounter() {
        return Counter.builder(Meters.MIRROR_DRIFT_REPAIRED)
                .description("Drifting objects sent for repair by the consistency repair")
                .register(registry);
    }
}
