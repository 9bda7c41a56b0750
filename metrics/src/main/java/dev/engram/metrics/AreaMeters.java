package dev.engram.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;

/** The base of the meters of one area of the service: the registry they register into and their common builders. */
abstract class AreaMeters {

    /** Whether a timed operation succeeded (tag {@code outcome} of the timers of snapshots and sink writes). */
    enum Outcome implements Meters.TagValue {
        OK,
        FAILED
    }

    final MeterRegistry registry;

    AreaMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    static Duration[] durations(long... millis) {
        Duration[] out = new Duration[millis.length];
        for (int i = 0; i < millis.length; i++) {
            out[i] = Duration.ofMillis(millis[i]);
        }
        return out;
    }

    Counter counter(String name, String description, String tag, String value) {
        return Counter.builder(name).description(description).tag(tag, value).register(registry);
    }
}
