package dev.engram.processors;

import java.util.HashMap;
import java.util.Map;

/**
 * The stream thread's time each namespace used in the current window of a local understand step, and whether one
 * used more than its share (see {@link UnderstandProcessor.Fairness}).
 */
final class ThreadShares {

    private final UnderstandProcessor.Fairness fairness;
    /** The thread's time each namespace used in the current window, and when the window began. */
    private final Map<String, Long> used = new HashMap<>();

    private long windowStart;

    ThreadShares(UnderstandProcessor.Fairness fairness) {
        this.fairness = fairness;
    }

    /** Whether {@code ns} used more than its share of the thread in the current window. */
    boolean overShare(String ns) {
        long now = fairness.nanoTime().getAsLong();
        if (now - windowStart > fairness.window().toNanos()) {
            used.clear();
            windowStart = now;
        }
        return used.getOrDefault(ns, 0L) > fairness.share().toNanos();
    }

    void charge(String ns, long nanos) {
        used.merge(ns, nanos, Long::sum);
    }

    /** Forgets the time used (the window goes on). */
    void clear() {
        used.clear();
    }
}
