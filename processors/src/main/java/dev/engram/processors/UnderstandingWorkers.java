package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.FairPermits;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The workers of a process whose understanding calls a remote model (an LLM extractor, an embeddings API). A call can
 * take minutes with retries; a Kafka transaction must not stay open that long, so the understand step never makes one
 * on a stream thread: it keeps the passage in its pending store, hands it over here, and emits the outcome in a later
 * transaction. A crash or a rebalance in between only costs the call again: the pending store brings the passage back.
 *
 * <p>At most {@link Settings#capacity()} passages are held at once across every task of the process — including those
 * waiting to be tried again after a transient failure, so that an outage backs the step up instead of trying every
 * passage of the backlog. Requests for the same extraction in flight at once share one call.
 */
public final class UnderstandingWorkers implements AutoCloseable {

    /**
     * @param capacity passages held at once by the process (in a call, or waiting to retry)
     * @param retryFor how long a passage may wait through transient failures before it is dead-lettered
     * @param firstBackoff the wait before the first retry; it doubles with each attempt
     * @param maxBackoff the longest wait between two attempts
     */
    public record Settings(int capacity, Duration retryFor, Duration firstBackoff, Duration maxBackoff) {
        public Settings {
            if (capacity < 1) {
                throw new IllegalArgumentException("capacity must be positive");
            }
            if (retryFor.isNegative() || firstBackoff.isNegative() || maxBackoff.compareTo(firstBackoff) < 0) {
                throw new IllegalArgumentException("invalid retry durations");
            }
        }

        /** The wait before attempt {@code attempt} (1 for the first retry). */
        Duration backoff(int attempt) {
            long millis = firstBackoff.toMillis() << Math.min(attempt - 1, 20);
            return Duration.ofMillis(Math.min(maxBackoff.toMillis(), Math.max(0, millis)));
        }
    }

    /** What became of one hand-over. */
    sealed interface Outcome {
        PassageEvent.Upsert passage();

        /**
         * The extraction this hand-over paid the extractor for — to be counted and cached whatever becomes of the
         * passage — or null when it took a cached extraction or shared another hand-over's call.
         */
        Extraction paid();
    }

    record Understood(PassageEvent.Upsert passage, Extraction paid, Understanding understanding, long nanos)
            implements Outcome {}

    /**
     * @param transientFailure whether the same call may pass later (see {@link Understander#transientFailure})
     */
    record Failed(PassageEvent.Upsert passage, Extraction paid, RuntimeException error, boolean transientFailure)
            implements Outcome {}

    private final Understander understander;
    private final Settings settings;
    private final Semaphore slots;
    private final ExecutorService executor;
    private final ConcurrentHashMap<String, CompletableFuture<Extraction>> extracting = new ConcurrentHashMap<>();
    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong shared = new AtomicLong();

    public UnderstandingWorkers(Understander understander, Settings settings, Meters meters) {
        this.understander = understander;
        this.settings = settings;
        this.slots = new Semaphore(settings.capacity());
        // Virtual threads: a worker mostly waits on the network; the client's own limit bounds the calls in flight.
        this.executor = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("engram-understand-", 0).factory());
        meters.understandPending(pending, AtomicLong::get);
    }

    public Understander understander() {
        return understander;
    }

    Settings settings() {
        return settings;
    }

    /** Slots free: the capacity less the passages held (in a call, or waiting to retry). */
    public int idle() {
        return slots.availablePermits();
    }

    /** Hand-overs that shared another's extraction call instead of making their own. */
    public long sharedCalls() {
        return shared.get();
    }

    /** Takes a slot for one more passage, if the process holds fewer than its capacity. */
    boolean tryAcquire() {
        return slots.tryAcquire();
    }

    /** Gives back a slot taken by {@link #tryAcquire()}. */
    void release() {
        slots.release();
    }

    /** Changes the count of passages held in pending stores of this process, for the gauge. */
    void pending(long delta) {
        pending.addAndGet(delta);
    }

    /**
     * Understands {@code passage} on a worker — extracting it unless {@code cached} is its extraction — and gives the
     * outcome to {@code done}, on the worker's thread. The caller holds a slot for it. False when the workers are
     * closing: nothing will come back.
     */
    boolean submit(PassageEvent.Upsert passage, String cacheKey, Extraction cached, Consumer<Outcome> done) {
        try {
            // the model calls take the passage's namespace's fair share of the client's permits
            executor.execute(() ->
                    done.accept(FairPermits.as(passage.namespace(), () -> understand(passage, cacheKey, cached))));
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    private Outcome understand(PassageEvent.Upsert passage, String cacheKey, Extraction cached) {
        long t0 = System.nanoTime();
        Extraction extraction = cached;
        boolean extracted = false;
        try {
            if (extraction == null) {
                CompletableFuture<Extraction> mine = new CompletableFuture<>();
                CompletableFuture<Extraction> leader = extracting.putIfAbsent(cacheKey, mine);
                if (leader == null) {
                    try {
                        extraction = understander.extract(passage);
                        mine.complete(extraction);
                        extracted = true;
                    } catch (RuntimeException e) {
                        mine.completeExceptionally(e);
                        throw e;
                    } finally {
                        extracting.remove(cacheKey, mine);
                    }
                } else {
                    shared.incrementAndGet();
                    extraction = join(leader);
                }
            }
            Understanding understanding = understander.embed(passage, extraction);
            return new Understood(passage, extracted ? extraction : null, understanding, System.nanoTime() - t0);
        } catch (RuntimeException e) {
            return new Failed(passage, extracted ? extraction : null, e, Understander.transientFailure(e));
        }
    }

    private static Extraction join(CompletableFuture<Extraction> leader) {
        try {
            return leader.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /** Stops the workers; calls in flight are interrupted and their passages stay pending for the next run. */
    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
