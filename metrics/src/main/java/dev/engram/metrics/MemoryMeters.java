package dev.engram.metrics;

import dev.engram.schemas.MemoryChange;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters of the memory step: memory changes, stale inputs, verification rejections and entity-resolution
 * decisions.
 */
final class MemoryMeters extends AreaMeters {

    MemoryMeters(MeterRegistry registry) {
        super(registry);
        // Counters exist from the start at zero, so rates and alerts work before the first event.
        for (Meters.RejectedKind kind : Meters.RejectedKind.values()) {
            rejectedCounter(kind);
        }
        for (Meters.StaleKind kind : Meters.StaleKind.values()) {
            staleCounter(kind);
        }
        for (MemoryChange.Type type : MemoryChange.Type.values()) {
            memoryChangeCounter(type);
        }
        for (MemoryChange.EntityDecision.Kind decision : MemoryChange.EntityDecision.Kind.values()) {
            resolutionCounter(decision);
        }
        skippedCounter();
    }

    void rejected(Meters.RejectedKind kind) {
        rejectedCounter(kind).increment();
    }

    void memoryChange(MemoryChange.Type type) {
        memoryChangeCounter(type).increment();
    }

    void stale(Meters.StaleKind kind) {
        staleCounter(kind).increment();
    }

    void resolution(MemoryChange.EntityDecision.Kind decision) {
        resolutionCounter(decision).increment();
    }

    void blockSkipped() {
        skippedCounter().increment();
    }

    private Counter rejectedCounter(Meters.RejectedKind kind) {
        return counter(
                Meters.REJECTED, "Entities and facts that failed verification, kept for review", "kind", kind.tag());
    }

    private Counter staleCounter(Meters.StaleKind kind) {
        return counter(Meters.STALE, "Memory-step inputs superseded by a newer document version", "kind", kind.tag());
    }

    private Counter memoryChangeCounter(MemoryChange.Type type) {
        return counter(Meters.MEMORY_CHANGES, "Memory changes emitted, by type", "type", type.wireName());
    }

    private Counter resolutionCounter(MemoryChange.EntityDecision.Kind decision) {
        return counter(Meters.RESOLUTION, "Entity-resolution decisions, by decision", "decision", decision.wireName());
    }

    private Counter skippedCounter() {
        return Counter.builder(Meters.RESOLUTION_SKIPPED)
                .description("Blocking-index blocks too large to discriminate, skipped during entity search")
                .register(registry);
    }
}
