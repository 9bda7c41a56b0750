package dev.engram.sinks;

import dev.engram.metrics.Meters;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the sink's calls to the stores with retries and backoff, and tells what a failure means: transient ones are
 * retried and then pause the partition ({@link Paused}), a refusal of the data is not retried ({@link Rejection}), and
 * one that a smaller batch may avoid is thrown at once ({@link TooBig}).
 */
final class Retries {

    /** Logs as the sink does, under one logger. */
    private static final Logger LOG = LoggerFactory.getLogger(MirrorSink.class);

    /** Thrown when transient failures outlasted the retries: the partition pauses. */
    static final class Paused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Paused(Throwable cause) {
            super(cause);
        }
    }

    /** A write that failed in a way a smaller batch may avoid: split at once, never retried at the same size. */
    static final class TooBig extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooBig(Throwable cause) {
            super(cause);
        }
    }

    /** A write the store refused (not worth retrying). */
    static final class Rejection extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Rejection(Throwable cause) {
            super(cause);
        }
    }

    private final MirrorSink.Settings settings;
    private final Meters meters;
    /** Set when the sink closes: a failure is then not retried. */
    private final AtomicBoolean closed;

    Retries(MirrorSink.Settings settings, Meters meters, AtomicBoolean closed) {
        this.settings = settings;
        this.meters = meters;
        this.closed = closed;
    }

    /** Like {@link #retrying}, but a failure a smaller batch may avoid is thrown at once as {@link TooBig}. */
    <T> T splittable(Meters.Sink sink, Supplier<T> op) {
        return retrying(sink, () -> {
            try {
                return op.get();
            } catch (Paused | Rejection | TooBig e) {
                throw e;
            } catch (RuntimeException e) {
                if (SinkFailure.sizeBound(e) != SinkFailure.Size.NONE) {
                    throw new TooBig(e);
                }
                throw e;
            }
        });
    }

    /** Runs {@code op}, retrying transient failures with backoff; throws {@link Paused} or {@link Rejection}. */
    <T> T retrying(Meters.Sink sink, Supplier<T> op) {
        Duration wait = settings.backoff();
        for (int attempt = 0; ; attempt++) {
            try {
                return op.get();
            } catch (Paused | Rejection | TooBig e) {
                throw e;
            } catch (RuntimeException e) {
                if (SinkFailure.permanent(e)) {
                    throw new Rejection(e);
                }
                if (attempt >= settings.retries() || closed.get()) {
                    meters.sinkPause(sink);
                    throw new Paused(e);
                }
                meters.sinkRetry(sink);
                LOG.debug("{} failed (attempt {}), retrying in {}: {}", sink.tag(), attempt + 1, wait, e.toString());
                sleep(wait);
                wait = wait.multipliedBy(2);
                if (wait.compareTo(settings.pause()) > 0) {
                    wait = settings.pause();
                }
            }
        }
    }

    /** Sleeps for {@code d}; an interruption pauses (the interrupt stays set). */
    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Paused(e);
        }
    }
}
