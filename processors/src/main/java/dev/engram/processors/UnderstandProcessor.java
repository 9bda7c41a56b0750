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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
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
    private ProcessorContext<Void, Emission> context;
    private ReadOnlyKeyValueStore<String, Extraction> cache;
    private Tally tally;
    private DeadLetters letters;

    // With a remote model only, and touched by the stream thread only (the workers write to a generation's inbox).
    private KeyValueStore<String, PendingPassage> pending;
    private long pendingCount;
    /**
     * Passages holding a worker slot: in a call, or waiting to be tried again. Every slot taken is either a call whose
     * outcome has not been settled yet, or a passage waiting here with no call: it goes back when that call's outcome
     * is settled (or arrives after a close), or when the waiting passage leaves.
     */
    private final Map<String, Held> held = new HashMap<>();
    /** Where the hand-over of passages without a slot resumes, so that every pending passage gets its turn. */
    private String cursor;
    /** This run of the processor (Streams may close a task and initialize it again, on the same object). */
    private Generation generation;

    /**
     * A passage with a slot: in {@code call} (a token, matched against the outcome), or waiting with no call until
     * {@code retryAtMs}; {@code failures} transient failures so far; {@code extraction} one already paid for, that the
     * next attempt reuses.
     */
    private record Held(Object call, int failures, long retryAtMs, Extraction extraction) {}

    /** An outcome, with the call it answers. */
    private record Arrived(Object call, UnderstandingWorkers.Outcome outcome) {}

    /** The outcomes of one run of the processor; once it is closed, an outcome only gives its slot back. */
    private static final class Generation {
        private final ConcurrentLinkedQueue<Arrived> inbox = new ConcurrentLinkedQueue<>();
        private boolean closed;

        synchronized void deliver(Arrived arrived, UnderstandingWorkers workers) {
            if (closed) {
                workers.release();
            } else {
                inbox.add(arrived);
            }
        }

        synchronized void close(UnderstandingWorkers workers) {
            closed = true;
            while (inbox.poll() != null) {
                workers.release();
            }
        }

        Arrived next() {
            return inbox.poll();
        }
    }

    /**
     * @param cacheStore name of the global extraction-cache store, or null to extract every time
     * @param scope which passages share a cached extraction
     */
    public UnderstandProcessor(
            Understander understander, String cacheStore, ExtractionCacheScope scope, Meters meters) {
        this(understander, cacheStore, scope, meters, null);
    }

    private UnderstandProcessor(
            Understander understander,
            String cacheStore,
            ExtractionCacheScope scope,
            Meters meters,
            UnderstandingWorkers workers) {
        this.understander = understander;
        this.cacheStore = cacheStore;
        this.scope = scope;
        this.meters = meters;
        this.workers = workers;
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
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, PassageEvent, Void, Emission> get() {
                return new UnderstandProcessor(understander, cacheStore, scope, meters);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                return Set.of(StateStores.UNDERSTAND_TALLY.builder());
            }
        };
    }

    public static ProcessorSupplier<String, PassageEvent, Void, Emission> deferred(
            UnderstandingWorkers workers, String cacheStore, ExtractionCacheScope scope, Meters meters) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, PassageEvent, Void, Emission> get() {
                return new UnderstandProcessor(workers.understander(), cacheStore, scope, meters, workers);
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
        this.cache = cacheStore == null ? null : context.getStateStore(cacheStore);
        this.tally = new Tally(context, StateStores.UNDERSTAND_TALLY, meters);
        this.letters = new DeadLetters(context, DeadLetter.Stage.UNDERSTAND, tally, UnderstandProcessor::classify);
        if (workers != null) {
            pending = context.getStateStore(StateStores.UNDERSTAND_PENDING.name());
            generation = new Generation();
            held.clear();
            cursor = null;
            pendingCount = 0;
            try (KeyValueIterator<String, PendingPassage> it = pending.all()) {
                while (it.hasNext()) {
                    it.next();
                    pendingCount++;
                }
            }
            workers.pending(pendingCount);
            context.schedule(POLL, PunctuationType.WALL_CLOCK_TIME, this::poll);
        }
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
                    understandInline(record, upsert);
                } else {
                    hold(record, upsert);
                }
            }
            case PassageEvent.Retraction retraction -> {
                if (workers != null) {
                    drop(record.key());
                }
                forward(record, new Emission.Understood(new UnderstandingEvent.Retracted(retraction)));
            }
        }
    }

    private void understandInline(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        understandInline(record, upsert, cached(key(upsert)));
    }

    /** Understands on the stream thread, from {@code known} (the cached extraction) when it is not null. */
    private void understandInline(Record<String, PassageEvent> record, PassageEvent.Upsert upsert, Extraction known) {
        long t0 = System.nanoTime();
        letters.call(record, DeadLetters.utf8(record.key()), () -> Json.toBytes(upsert), () -> {
                    String key = key(upsert);
                    Extraction extraction = known;
                    if (extraction == null) {
                        extraction = understander.extract(upsert);
                        extracted(record.timestamp(), record.headers(), upsert, key, extraction);
                    }
                    return understood(upsert, understander.embed(upsert, extraction), System.nanoTime() - t0);
                })
                .ifPresent(event -> forward(record, new Emission.Understood(event)));
    }

    private String key(PassageEvent.Upsert upsert) {
        return scope.key(upsert, understander.extractor().id(upsert.namespace()));
    }

    /** The cached extraction under {@code key} (counted as a hit or a miss), or null. */
    private Extraction cached(String key) {
        if (cache == null) {
            return null;
        }
        Extraction extraction = cache.get(key);
        meters.extractionCache(extraction != null);
        return extraction;
    }

    /** Counts what an extraction cost and, when it is worth it, caches it. */
    private void extracted(
            long timestamp, Headers headers, PassageEvent.Upsert upsert, String key, Extraction extraction) {
        meters.extractionUsage(upsert.namespace(), extraction);
        // an agent construction that fell back for a passing reason (budget, busy, model away) is not cached: a
        // replay tries the agent again
        if (cache != null
                && (extraction.construction() == null
                        || extraction.construction().cacheable())) {
            context.forward(
                    new Record<Void, Emission>(null, new Emission.Extracted(key, extraction), timestamp, headers));
        }
    }

    private UnderstandingEvent understood(PassageEvent.Upsert upsert, Understanding understanding, long nanos) {
        meters.understood(understander.extractor().id(), Duration.ofNanos(nanos));
        return new UnderstandingEvent.Understood(upsert, understanding);
    }

    // ---- remote model ---------------------------------------------------------------------------------------------

    /** Keeps an upsert pending (replacing an older one of the passage) and hands it to a worker if a slot is free. */
    private void hold(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        String passageId = record.key();
        Extraction known = cached(key(upsert));
        if (known != null && !understander.embedder().remote()) {
            // A cached extraction and a local embedder: nothing remote to wait for.
            drop(passageId);
            understandInline(record, upsert, known);
            return;
        }
        RecordMetadata meta = context.recordMetadata().orElse(null);
        PendingPassage passage = new PendingPassage(
                upsert,
                meta == null ? "" : meta.topic(),
                meta == null ? -1 : meta.partition(),
                meta == null ? -1 : meta.offset(),
                record.timestamp(),
                0);
        if (pending.get(passageId) == null) {
            count(1);
        }
        pending.put(passageId, passage);
        // A held passage's call (or retry) finds the new upsert when it settles; otherwise a free slot takes it now,
        // and without one the hand-over in poll() takes it later.
        if (!held.containsKey(passageId) && workers.tryAcquire()) {
            call(passageId, upsert, 0, known);
        }
    }

    /** Forgets a passage's pending upsert, if it has one; a slot it waits with goes back (a call's, when it ends). */
    private void drop(String passageId) {
        if (pending.delete(passageId) != null) {
            count(-1);
        }
        Held h = held.remove(passageId);
        if (h != null && h.call() == null) {
            workers.release();
        }
    }

    /**
     * Hands {@code upsert} to a worker, with the slot the caller holds for it and its extraction if one is known
     * (cached, or paid for by an earlier attempt).
     */
    private void call(String passageId, PassageEvent.Upsert upsert, int failures, Extraction known) {
        Object call = new Object();
        Generation g = generation;
        held.put(passageId, new Held(call, failures, 0, known));
        if (!workers.submit(upsert, key(upsert), known, outcome -> g.deliver(new Arrived(call, outcome), workers))) {
            held.remove(passageId);
            workers.release();
        }
    }

    /** Settles the outcomes that arrived, then hands over what may go: retries that are due, then waiting passages. */
    private void poll(long now) {
        for (Arrived arrived; (arrived = generation.next()) != null; ) {
            settle(arrived, now);
        }
        for (Map.Entry<String, Held> e : List.copyOf(held.entrySet())) {
            Held h = e.getValue();
            if (h.call() == null && h.retryAtMs() <= now) {
                PendingPassage p = pending.get(e.getKey());
                if (p == null) {
                    drop(e.getKey());
                } else {
                    // a passage id is made from the content's hash: the extraction fits whatever upsert is pending
                    Extraction known = h.extraction() != null ? h.extraction() : cached(key(p.passage()));
                    call(e.getKey(), p.passage(), h.failures(), known);
                }
            }
        }
        if (held.size() < pendingCount && workers.idle() > 0) {
            handOver();
        }
    }

    /**
     * Hands pending passages without a slot to workers while slots are free, going round the store from where the last
     * hand-over stopped: no passage waits for ever behind newer ones, and no tick rescans what it passed.
     */
    private void handOver() {
        List<KeyValue<String, PendingPassage>> next = new ArrayList<>();
        String from = cursor;
        boolean full = collect(from == null ? pending.all() : pending.range(from, null), from, null, next);
        if (!full && from != null) {
            collect(pending.all(), null, from, next);
        }
        for (KeyValue<String, PendingPassage> kv : next) {
            call(kv.key, kv.value.passage(), 0, cached(key(kv.value.passage())));
        }
    }

    /**
     * Takes a slot for each passage of {@code it} without one (after {@code after}, up to {@code upTo}, both exclusive)
     * into {@code into}; true when the slots ran out.
     */
    private boolean collect(
            KeyValueIterator<String, PendingPassage> it,
            String after,
            String upTo,
            List<KeyValue<String, PendingPassage>> into) {
        try (it) {
            while (it.hasNext()) {
                KeyValue<String, PendingPassage> kv = it.next();
                if (upTo != null && kv.key.compareTo(upTo) >= 0) {
                    return false;
                }
                if (kv.key.equals(after) || held.containsKey(kv.key)) {
                    continue;
                }
                if (!workers.tryAcquire()) {
                    return true;
                }
                into.add(kv);
                cursor = kv.key;
            }
            return false;
        }
    }

    private void settle(Arrived arrived, long now) {
        UnderstandingWorkers.Outcome outcome = arrived.outcome();
        String passageId = outcome.passage().passageId();
        PendingPassage p = pending.get(passageId);
        if (outcome.paid() != null) {
            // Paid for, so counted and cached whatever becomes of the passage.
            extracted(
                    p == null ? now : p.timestamp(),
                    new RecordHeaders(),
                    outcome.passage(),
                    key(outcome.passage()),
                    outcome.paid());
        }
        Held h = held.get(passageId);
        if (h == null || h.call() != arrived.call()) {
            workers.release(); // the call of a passage dropped meanwhile
            return;
        }
        if (p == null || !p.passage().equals(outcome.passage())) {
            // replaced while in its call: the new upsert waits for the next hand-over
            held.remove(passageId);
            workers.release();
            return;
        }
        switch (outcome) {
            case UnderstandingWorkers.Understood u -> {
                UnderstandingEvent event = understood(u.passage(), u.understanding(), u.nanos());
                held.remove(passageId);
                workers.release();
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
                    held.put(passageId, new Held(null, failures, now + Math.max(1, backoff.toMillis()), known));
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
                held.remove(passageId);
                workers.release();
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
        workers.pending(delta);
    }

    private void forward(Record<String, PassageEvent> record, Emission emission) {
        context.forward(new Record<Void, Emission>(null, emission, record.timestamp(), record.headers()));
    }

    @Override
    public void close() {
        if (tally != null) {
            tally.close();
        }
        if (workers == null) {
            return;
        }
        // Calls in flight give their slots back when they end; passages waiting with no call give theirs now.
        generation.close(workers);
        for (Held h : held.values()) {
            if (h.call() == null) {
                workers.release();
            }
        }
        held.clear();
        workers.pending(-pendingCount);
        pendingCount = 0;
    }
}
