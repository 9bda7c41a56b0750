package dev.engram.metrics;

import dev.engram.schemas.DeadLetter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The totals of documents ({@link Meters#DOCUMENTS}) and dead letters ({@link Meters#DEAD_LETTERS}): a series per
 * owner (a stream task that keeps its totals in a store of its own, or this process), each a function counter.
 */
final class StreamTotals {

    /** The owner of totals counted in this process's memory only (the mirror sink, the stream's error handlers). */
    private static final String IN_MEMORY = "process";

    private final MeterRegistry registry;
    /** The totals of documents and dead letters: owner (a stream task, or this process) → key → total. */
    private final Map<String, Map<String, AtomicLong>> totals = new ConcurrentHashMap<>();
    /** The counters of each owner's totals, taken away with it. */
    private final Map<String, List<Meter>> totalMeters = new ConcurrentHashMap<>();

    StreamTotals(MeterRegistry registry) {
        this.registry = registry;
        for (Meters.DocumentOutcome outcome : Meters.DocumentOutcome.values()) {
            series(IN_MEMORY, Meters.documentsKey(outcome));
        }
        for (DeadLetter.Cause cause : DeadLetter.Cause.values()) {
            for (DeadLetter.Stage stage : cause.stages()) {
                series(IN_MEMORY, Meters.deadLettersKey(stage, cause));
            }
        }
    }

    void total(String owner, String key, long value) {
        series(owner, key).set(value);
    }

    void forgetTotals(String owner) {
        Map<String, AtomicLong> gone = totals.remove(owner);
        List<Meter> meters = totalMeters.remove(owner);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
        if (gone != null) {
            gone.clear();
        }
    }

    /** Counts a dead letter in this process's memory only. */
    void deadLetter(DeadLetter.Stage stage, DeadLetter.Cause cause) {
        series(IN_MEMORY, Meters.deadLettersKey(stage, cause)).incrementAndGet();
    }

    /** The total of {@code owner} under {@code key}, registered as a counter the first time. */
    private AtomicLong series(String owner, String key) {
        return totals.computeIfAbsent(owner, o -> new ConcurrentHashMap<>()).computeIfAbsent(key, k -> {
            AtomicLong value = new AtomicLong();
            String[] parts = k.split("/");
            FunctionCounter.Builder<AtomicLong> b = parts[0].equals(Meters.DOCUMENTS)
                    ? FunctionCounter.builder(Meters.DOCUMENTS, value, AtomicLong::get)
                            .description("Documents read from the documents topic, by outcome, as committed with"
                                    + " the read step's output (kept in its store per task)")
                            .tag("outcome", parts[1])
                    : FunctionCounter.builder(Meters.DEAD_LETTERS, value, AtomicLong::get)
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
}
