package dev.engram.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.function.ToDoubleFunction;

/**
 * The meters of reading and understanding passages: passage events, understanding time, retries and pending passages
 * of remote models, embedded texts and the extraction cache.
 */
final class IngestMeters extends AreaMeters {

    /** Histogram buckets of understanding one passage: a local model takes milliseconds, an LLM seconds. */
    private static final Duration[] UNDERSTAND_BUCKETS =
            durations(10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000);

    IngestMeters(MeterRegistry registry) {
        super(registry);
        // Counters exist from the start at zero, so rates and alerts work before the first event.
        for (Meters.PassageOp op : Meters.PassageOp.values()) {
            passageCounter(op);
        }
        for (Meters.CacheResult result : Meters.CacheResult.values()) {
            cacheCounter(result);
        }
        retryCounter();
    }

    void passages(Meters.PassageOp op, int n) {
        passageCounter(op).increment(n);
    }

    void understood(String extractor, Duration took) {
        Timer.builder(Meters.UNDERSTAND)
                .description("Time to understand one passage")
                .tag("extractor", extractor)
                .serviceLevelObjectives(UNDERSTAND_BUCKETS)
                .register(registry)
                .record(took);
    }

    void understandRetry() {
        retryCounter().increment();
    }

    <T> void understandPending(T state, ToDoubleFunction<T> pending) {
        Gauge.builder(Meters.UNDERSTAND_PENDING, state, pending)
                .description(
                        "Passages held by this instance's understand tasks: for a remote model, or set aside for their"
                                + " namespace's turn")
                .register(registry);
    }

    <T> void embeddingTexts(T state, ToDoubleFunction<T> embedded, ToDoubleFunction<T> reused) {
        FunctionCounter.builder(Meters.EMBEDDING_TEXTS, state, embedded)
                .description("Texts the understanding embedded, by where their vector came from")
                .tag("source", "model")
                .register(registry);
        FunctionCounter.builder(Meters.EMBEDDING_TEXTS, state, reused)
                .description("Texts the understanding embedded, by where their vector came from")
                .tag("source", "reused")
                .register(registry);
    }

    void extractionCache(Meters.CacheResult result) {
        cacheCounter(result).increment();
    }

    private Counter passageCounter(Meters.PassageOp op) {
        return counter(Meters.PASSAGES, "Passage events emitted by the read step", "op", op.tag());
    }

    private Counter cacheCounter(Meters.CacheResult result) {
        return counter(
                Meters.EXTRACTION_CACHE,
                "Extraction-cache lookups (hit, miss), and records of its topic that are no extraction (invalid)",
                "result",
                result.tag());
    }

    private Counter retryCounter() {
        return Counter.builder(Meters.UNDERSTAND_RETRIES)
                .description("Passages put back to wait after a transient failure of their remote model")
                .register(registry);
    }
}
