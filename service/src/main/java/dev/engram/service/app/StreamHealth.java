package dev.engram.service.app;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Supplier;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The health of one instance's two stream applications (ingest and memory), for the health endpoints:
 *
 * <ul>
 *   <li><b>live</b> unless an application has stopped for good (ERROR, or shut down while the instance runs): only a
 *       restart helps then;
 *   <li><b>ready</b> when both applications run and neither is re-failing ({@value #REFAILING_THREADS} or more stream
 *       threads replaced within {@link #REFAILING_WINDOW}) — a thread that fails on the same record again and again
 *       makes no progress even though its application says RUNNING;
 *   <li><b>serving</b> while the memory application can answer queries (RUNNING or REBALANCING).
 * </ul>
 */
final class StreamHealth {

    static final int REFAILING_THREADS = 3;
    static final Duration REFAILING_WINDOW = Duration.ofMinutes(5);

    /** One stream application: its state and the times its stream threads failed recently. */
    static final class App {
        private volatile Supplier<KafkaStreams.State> state = () -> KafkaStreams.State.CREATED;
        private final Deque<Instant> failures = new ArrayDeque<>();

        /** Follows this application's state from now on. */
        void track(Supplier<KafkaStreams.State> state) {
            this.state = state;
        }

        KafkaStreams.State state() {
            return state.get();
        }

        synchronized void threadFailed(Instant at) {
            failures.addLast(at);
            while (failures.size() > 64) {
                failures.removeFirst();
            }
        }

        synchronized int recentFailures(Instant now) {
            Instant since = now.minus(REFAILING_WINDOW);
            while (!failures.isEmpty() && failures.peekFirst().isBefore(since)) {
                failures.removeFirst();
            }
            return failures.size();
        }
    }

    private final App ingest;
    private final App memory;
    private final Clock clock;
    private final String instance;
    private final String extractor;
    private final String embedder;

    StreamHealth(App ingest, App memory, Clock clock, String instance, String extractor, String embedder) {
        this.ingest = ingest;
        this.memory = memory;
        this.clock = clock;
        this.instance = instance;
        this.extractor = extractor;
        this.embedder = embedder;
    }

    App ingest() {
        return ingest;
    }

    App memory() {
        return memory;
    }

    Health health() {
        Instant now = clock.instant();
        KafkaStreams.State m = memory.state();
        KafkaStreams.State i = ingest.state();
        int ingestFailures = ingest.recentFailures(now);
        int memoryFailures = memory.recentFailures(now);
        boolean live = alive(m) && alive(i);
        boolean running = m == KafkaStreams.State.RUNNING && i == KafkaStreams.State.RUNNING;
        boolean ready = running && ingestFailures < REFAILING_THREADS && memoryFailures < REFAILING_THREADS;
        String status;
        if (!live) {
            status = "DOWN";
        } else if (running && !ready) {
            status = "FAILING";
        } else if (running) {
            status = "UP";
        } else {
            status = m.isRunningOrRebalancing() && i.isRunningOrRebalancing() ? "REBALANCING" : "STARTING";
        }
        return new Health(
                status,
                m.isRunningOrRebalancing(),
                live,
                ready,
                m.name(),
                i.name(),
                memoryFailures,
                ingestFailures,
                instance,
                extractor,
                embedder);
    }

    /** False once an application cannot come back by itself. */
    private static boolean alive(KafkaStreams.State s) {
        return s != KafkaStreams.State.ERROR
                && s != KafkaStreams.State.PENDING_ERROR
                && s != KafkaStreams.State.NOT_RUNNING
                && s != KafkaStreams.State.PENDING_SHUTDOWN;
    }
}
