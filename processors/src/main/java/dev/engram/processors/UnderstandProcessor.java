package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.PendingPassage;
import dev.engram.stores.StateStores;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.Understander;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * UNDERSTAND: parallel over passage ids. An upserted passage is extracted — or its extraction is taken from the cache
 * of (namespace, content hash, extractor id) — see {@link ExtractionCacheScope} — so replays, restarts and
 * re-embeddings never pay an LLM twice — then embedded; a
 * retraction passes through. A passage that cannot be understood becomes a dead letter.
 *
 * <p>With a local model the passage is understood inline. With a remote one (see {@link UnderstandingWorkers}) the
 * step never waits for it: the passage goes to the {@code understand-pending} store and to a worker, and a punctuation
 * emits the outcome — the understanding (and the extraction, for the cache), or a dead letter. A transient failure (no
 * answer, 429, 5xx) is tried again later with backoff, for up to the configured time, instead of being dead-lettered.
 * Only the latest event of a passage counts: a newer upsert or a retraction replaces a pending one, and the outcome of
 * the replaced one is dropped.
 *
 * <p>Namespaces take turns (see {@link Fairness}): passages waiting for a worker are handed over round the namespaces,
 * and with a local model a namespace whose backlog has used its share of the thread has its further passages set
 * aside in the pending store and understood in turns with other namespaces' — so one tenant's large document does not
 * hold up every other tenant on its partition until it is done.
 */
public final class UnderstandProcessor implements Processor<String, PassageEvent, Void, Emission> {

    private static final Logger LOG = LoggerFactory.getLogger(UnderstandProcessor.class);
    /** How often a task with a remote model looks for outcomes and hands over waiting passages. */
    static final Duration POLL = Duration.ofMillis(200);

    private final Understander understander;
    private final String cacheStore;
    private final ExtractionCacheScope scope;
    private final Meters meters;
    private final UnderstandingWorkers workers;
    private final Fairness fairness;
    /** Passages set aside by the local step's tasks of this process, for the pending gauge; null with workers. */
    private final AtomicLong deferred;

    private ProcessorContext<Void, Emission> context;
    private ExtractionCache extractions;
    private Tally tally;
    private DeadLetters letters;

    // Touched by the stream thread only (the workers write to a generation's inbox).
    private KeyValueStore<String, PendingPassage> pending;
    private long pendingCount;
    /** Pending passages without a worker slot (remote) or set aside (local), in their turns. */
    private final NamespaceTurns turns = new NamespaceTurns();
    /** Local model: the thread's time each namespace used in the current window. */
    private final ThreadShares shares;
    /** Remote model: the passages holding a worker slot, and the outcomes of their calls. */
    private final WorkerSlots slots;

    /**
     * How a local step keeps one namespace's backlog from holding up the others on its partition. A namespace that
     * used more than {@code share} of the stream thread in the current {@code window}, while its passages come later
     * than {@code lateAfter} (the step is behind), has its further passages set aside in the pending store — as have
     * all passages of a namespace that has some set aside, so that they keep their order. A punctuation understands
     * the set-aside passages in turns, one namespace after another, for up to {@code slice} at a time; in between, the
     * thread reads on, and the passages of namespaces within their share are understood as they come. At most
     * {@code maxDeferred} passages are set aside per task; past that the step understands as it reads.
     *
     * @param nanoTime the clock the time used is measured with
     */
    public record Fairness(
            Duration window,
            Duration share,
            Duration lateAfter,
            Duration slice,
            int maxDeferred,
            LongSupplier nanoTime) {

        public static final Fairness DEFAULT = new Fairness(
                Duration.ofSeconds(1),
                Duration.ofMillis(250),
                Duration.ofSeconds(1),
                Duration.ofMillis(500),
                10_000,
                System::nanoTime);

        public Fairness {
            if (maxDeferred < 0 || share.isNegative() || slice.isNegative() || !window.isPositive()) {
                throw new IllegalArgumentException("invalid fairness settings");
            }
        }
    }

    private UnderstandProcessor(
            Understander understander,
            String cacheStore,
            ExtractionCacheScope scope,
            Meters meters,
            UnderstandingWorkers workers,
            Fairness fairness,
            AtomicLong deferred) {
        this.understander = understander;
        this.cacheStore = cacheStore;
        this.scope = scope;
        this.meters = meters;
        this.workers = workers;
        this.fairness = fairness;
        this.deferred = deferred;
        this.shares = new ThreadShares(fairness);
        this.slots = new WorkerSlots(workers);
    }

    /**
     * The step over {@code workers}' remote model, with its pending store.
     *
     * @param cacheStore name of the global extraction-cache store, or null to extract every time
     * @param scope which passages share a cached extraction (and, while it is made, a call to the model)
     */
    /** The understand step, understanding each passage as it comes, with the store of its totals. */
    public static ProcessorSupplier<String, PassageEvent, Void, Emission> supplier(
            Understander understander, String cacheStore, ExtractionCacheScope scope, Meters meters) {
        return supplier(understander, cacheStore, scope, meters, Fairness.DEFAULT);
    }

    /** As {@link #supplier(Understander, String, ExtractionCacheScope, Meters)}, with the namespaces' turns. */
    public static ProcessorSupplier<String, PassageEvent, Void, Emission> supplier(
            Understander understander,
            String cacheStore,
            ExtractionCacheScope scope,
            Meters meters,
            Fairness fairness) {
        AtomicLong deferred = new AtomicLong();
        meters.understandPending(deferred, AtomicLong::get);
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, PassageEvent, Void, Emission> get() {
                return new UnderstandProcessor(understander, cacheStore, scope, meters, null, fairness, deferred);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                return Set.of(StateStores.UNDERSTAND_PENDING.builder(), StateStores.UNDERSTAND_TALLY.builder());
            }
        };
    }

    public static ProcessorSupplier<String, PassageEvent, Void, Emission> deferred(
            UnderstandingWorkers workers, String cacheStore, ExtractionCacheScope scope, Meters meters) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, PassageEvent, Void, Emission> get() {
                return new UnderstandProcessor(
                        workers.understander(), cacheStore, scope, meters, workers, Fairness.DEFAULT, null);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                return Set.of(StateStores.UNDERSTAND_PENDING.builder(), StateStores.UNDERSTAND_TALLY.builder());
            }
        };
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
        this.extractions = new ExtractionCache(context, cacheStore, understander, scope, meters);
        this.tally = new Tally(context, StateStores.UNDERSTAND_TALLY, meters);
        this.letters = new DeadLetters(context, DeadLetter.Stage.UNDERSTAND, tally, UnderstandProcessor::classify);
        pending = context.getStateStore(StateStores.UNDERSTAND_PENDING.name());
        slots.open();
        turns.clear();
        shares.clear();
        pendingCount = 0;
        // nothing holds a slot yet: every pending passage waits for its turn (in key order, after a restart)
        try (KeyValueIterator<String, PendingPassage> it = pending.all()) {
            while (it.hasNext()) {
                KeyValue<String, PendingPassage> kv = it.next();
                turns.add(kv.value.passage().namespace(), kv.key);
                pendingCount++;
            }
        }
        if (workers != null) {
            workers.pending(pendingCount);
        } else {
            deferred.addAndGet(pendingCount);
        }
        context.schedule(POLL, PunctuationType.WALL_CLOCK_TIME, this::poll);
    }

    private static DeadLetters.Failure classify(RuntimeException e) {
        return e instanceof ExtractionException
                ? new DeadLetters.Failure(DeadLetter.Cause.EXTRACTOR_ERROR, e.getMessage())
                : new DeadLetters.Failure(DeadLetter.Cause.ERROR, "understanding failed: " + e);
    }

    @Override
    public void process(Record<String, PassageEvent> record) {
        if (record.value() == null) {
            letters.reject(
                    record,
                    DeadLetter.Cause.UNDECODABLE,
                    "null value: the read step never writes one (a passage or its retraction)",
                    DeadLetters.utf8(record.key()),
                    null);
            return;
        }
        switch (record.value()) {
            case PassageEvent.Upsert upsert -> {
                if (workers == null) {
                    understandLocally(record, upsert);
                } else {
                    hold(record, upsert);
                }
            }
            case PassageEvent.Retraction retraction -> {
                drop(record.key());
                forward(record, new Emission.Understood(new UnderstandingEvent.Retracted(retraction)));
            }
        }
    }

    /**
     * Understands an upsert now, or sets it aside for its namespace's turn: when a newer upsert of a passage set aside
     * comes, it takes the older one's place; when its namespace has passages set aside or has used its share while
     * the step is behind, it joins them (while the task may set more aside).
     */
    private void understandLocally(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        String passageId = record.key();
        String ns = upsert.namespace();
        if (turns.waits(passageId)) {
            pending.put(passageId, pendingOf(record, upsert));
            return;
        }
        boolean late = context.currentSystemTimeMs() - record.timestamp()
                > fairness.lateAfter().toMillis();
        if (turns.size() < fairness.maxDeferred() && (turns.hasWaiting(ns) || (late && shares.overShare(ns)))) {
            pending.put(passageId, pendingOf(record, upsert));
            turns.add(ns, passageId);
            count(1);
            return;
        }
        long t0 = fairness.nanoTime().getAsLong();
        understandInline(record, upsert, extractions.cached(extractions.key(upsert)));
        shares.charge(ns, fairness.nanoTime().getAsLong() - t0);
    }

    /**
     * Understands passages set aside, in their namespaces' turns, for up to a slice of the thread's time (at least
     * one passage); what it emits carries the timestamp of the record each came in.
     */
    private void drain() {
        long start = fairness.nanoTime().getAsLong();
        long slice = fairness.slice().toNanos();
        boolean first = true;
        while (!turns.isEmpty() && (first || fairness.nanoTime().getAsLong() - start < slice)) {
            first = false;
            String passageId = turns.next();
            PendingPassage p = pending.delete(passageId);
            if (p == null) {
                continue;
            }
            count(-1);
            long t0 = fairness.nanoTime().getAsLong();
            PassageEvent.Upsert upsert = p.passage();
            try {
                String key = extractions.key(upsert);
                Extraction extraction = extractions.cached(key);
                if (extraction == null) {
                    extraction = understander.extract(upsert);
                    extractions.extracted(p.timestamp(), new RecordHeaders(), upsert, key, extraction);
                }
                UnderstandingEvent event = understood(
                        upsert,
                        understander.embed(upsert, extraction),
                        fairness.nanoTime().getAsLong() - t0);
                context.forward(new Record<Void, Emission>(
                        null, new Emission.Understood(event), p.timestamp(), new RecordHeaders()));
            } catch (StreamsException e) {
                throw e;
            } catch (RuntimeException e) {
                letters.reject(
                        p.topic(),
                        p.partition(),
                        p.offset(),
                        p.timestamp(),
                        classify(e),
                        DeadLetters.utf8(passageId),
                        Json.toBytes(upsert));
            }
            shares.charge(upsert.namespace(), fairness.nanoTime().getAsLong() - t0);
        }
    }

    /** The record of {@code upsert} as the pending store keeps it, with where it was read. */
    private PendingPassage pendingOf(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        RecordMetadata meta = context.recordMetadata().orElse(null);
        return new PendingPassage(
                upsert,
                meta == null ? "" : meta.topic(),
                meta == null ? -1 : meta.partition(),
                meta == null ? -1 : meta.offset(),
                record.timestamp(),
                0);
    }

    /** Understands on the stream thread, from {@code known} (the cached extraction) when it is not null. */
    private void understandInline(Record<String, PassageEvent> record, PassageEvent.Upsert upsert, Extraction known) {
        long t0 = System.nanoTime();
        letters.call(record, DeadLetters.utf8(record.key()), () -> Json.toBytes(upsert), () -> {
                    String key = extractions.key(upsert);
                    Extraction extraction = known;
                    if (extraction == null) {
                        extraction = understander.extract(upsert);
                        extractions.extracted(record.timestamp(), record.headers(), upsert, key, extraction);
                    }
                    return understood(upsert, understander.embed(upsert, extraction), System.nanoTime() - t0);
                })
                .ifPresent(event -> forward(record, new Emission.Understood(event)));
    }

    private UnderstandingEvent understood(PassageEvent.Upsert upsert, Understanding understanding, long nanos) {
        meters.understood(understander.extractor().id(), Duration.ofNanos(nanos));
        return new UnderstandingEvent.Understood(upsert, understanding);
    }

    // ---- remote model ---------------------------------------------------------------------------------------------

    /** Keeps an upsert pending (replacing an older one of the passage) and hands it to a worker if a slot is free. */
    private void hold(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        String passageId = record.key();
        Extraction known = extractions.cached(extractions.key(upsert));
        if (known != null && !understander.embedder().remote()) {
            // A cached extraction and a local embedder: nothing remote to wait for.
            drop(passageId);
            understandInline(record, upsert, known);
            return;
        }
        PendingPassage passage = pendingOf(record, upsert);
        if (pending.get(passageId) == null) {
            count(1);
        }
        pending.put(passageId, passage);
        // A held passage's call (or retry) finds the new upsert when it settles; a waiting one keeps its turn;
        // otherwise a free slot takes it now, and without one it waits for its namespace's turn in poll().
        if (slots.holds(passageId) || turns.waits(passageId)) {
            return;
        }
        if (turns.isEmpty() && workers.tryAcquire()) {
            call(passageId, upsert, 0, known);
        } else {
            turns.add(upsert.namespace(), passageId);
        }
    }

    /** Forgets a passage's pending upsert, if it has one; a slot it waits with goes back (a call's, when it ends). */
    private void drop(String passageId) {
        turns.remove(passageId);
        if (pending.delete(passageId) != null) {
            count(-1);
        }
        slots.leave(passageId);
    }

    /**
     * Hands {@code upsert} to a worker, with the slot the caller holds for it and its extraction if one is known
     * (cached, or paid for by an earlier attempt).
     */
    private void call(String passageId, PassageEvent.Upsert upsert, int failures, Extraction known) {
        slots.call(passageId, upsert, extractions.key(upsert), failures, known);
    }

    /** Settles the outcomes that arrived, then hands over what may go: retries that are due, then waiting passages. */
    private void poll(long now) {
        if (workers == null) {
            drain();
            return;
        }
        for (WorkerSlots.Arrived arrived; (arrived = slots.next()) != null; ) {
            settle(arrived, now);
        }
        for (Map.Entry<String, WorkerSlots.Held> e : slots.all()) {
            WorkerSlots.Held h = e.getValue();
            if (h.call() == null && h.retryAtMs() <= now) {
                PendingPassage p = pending.get(e.getKey());
                if (p == null) {
                    drop(e.getKey());
                } else {
                    // a passage id is made from the content's hash: the extraction fits whatever upsert is pending
                    Extraction known =
                            h.extraction() != null ? h.extraction() : extractions.cached(extractions.key(p.passage()));
                    call(e.getKey(), p.passage(), h.failures(), known);
                }
            }
        }
        handOver();
    }

    /** Hands waiting passages to workers while slots are free, one namespace after another. */
    private void handOver() {
        while (!turns.isEmpty() && workers.tryAcquire()) {
            String passageId = turns.next();
            PendingPassage p = pending.get(passageId);
            if (p == null) {
                workers.release();
            } else {
                call(passageId, p.passage(), 0, extractions.cached(extractions.key(p.passage())));
            }
        }
    }

    private void settle(WorkerSlots.Arrived arrived, long now) {
        UnderstandingWorkers.Outcome outcome = arrived.outcome();
        String passageId = outcome.passage().passageId();
        PendingPassage p = pending.get(passageId);
        if (outcome.paid() != null) {
            // Paid for, so counted and cached whatever becomes of the passage.
            extractions.extracted(
                    p == null ? now : p.timestamp(),
                    new RecordHeaders(),
                    outcome.passage(),
                    extractions.key(outcome.passage()),
                    outcome.paid());
        }
        WorkerSlots.Held h = slots.held(passageId);
        if (h == null || h.call() != arrived.call()) {
            workers.release(); // the call of a passage dropped meanwhile
            return;
        }
        if (p == null || !p.passage().equals(outcome.passage())) {
            // replaced while in its call: the new upsert waits for its namespace's turn
            slots.settled(passageId);
            if (p != null) {
                turns.add(p.passage().namespace(), passageId);
            }
            return;
        }
        switch (outcome) {
            case UnderstandingWorkers.Understood u -> {
                UnderstandingEvent event = understood(u.passage(), u.understanding(), u.nanos());
                slots.settled(passageId);
                drop(passageId);
                context.forward(new Record<Void, Emission>(
                        null, new Emission.Understood(event), p.timestamp(), new RecordHeaders()));
            }
            case UnderstandingWorkers.Failed f -> {
                long since = p.failingSinceMs() > 0 ? p.failingSinceMs() : now;
                Duration failing = Duration.ofMillis(now - since);
                UnderstandingWorkers.Settings settings = workers.settings();
                if (f.transientFailure() && failing.compareTo(settings.retryFor()) < 0) {
                    if (p.failingSinceMs() == 0) {
                        pending.put(passageId, p.failingSince(now));
                    }
                    int failures = h.failures() + 1;
                    Duration backoff = settings.backoff(failures);
                    Extraction known = f.paid() != null ? f.paid() : h.extraction();
                    slots.retryAt(passageId, failures, now + Math.max(1, backoff.toMillis()), known);
                    meters.understandRetry();
                    LOG.warn(
                            "passage {} failed transiently ({} time(s) in a row); trying again in {}: {}",
                            passageId,
                            failures,
                            backoff,
                            f.error().getMessage());
                    return;
                }
                DeadLetters.Failure failure = f.transientFailure()
                        ? new DeadLetters.Failure(
                                DeadLetter.Cause.EXTRACTOR_UNAVAILABLE,
                                "the model kept failing for " + failing + ": "
                                        + f.error().getMessage())
                        : classify(f.error());
                slots.settled(passageId);
                drop(passageId);
                letters.reject(
                        p.topic(),
                        p.partition(),
                        p.offset(),
                        p.timestamp(),
                        failure,
                        DeadLetters.utf8(passageId),
                        Json.toBytes(p.passage()));
            }
        }
    }

    private void count(long delta) {
        pendingCount += delta;
        if (workers != null) {
            workers.pending(delta);
        } else {
            deferred.addAndGet(delta);
        }
    }

    private void forward(Record<String, PassageEvent> record, Emission emission) {
        context.forward(new Record<Void, Emission>(null, emission, record.timestamp(), record.headers()));
    }

    @Override
    public void close() {
        if (tally != null) {
            tally.close();
        }
        turns.clear();
        if (workers == null) {
            deferred.addAndGet(-pendingCount);
            pendingCount = 0;
            return;
        }
        // Calls in flight give their slots back when they end; passages waiting with no call give theirs now.
        slots.close();
        workers.pending(-pendingCount);
        pendingCount = 0;
    }
}
