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
import java.util.Iterator;
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
 * of (content hash, extractor id), so replays, restarts and re-embeddings never pay an LLM twice — then embedded; a
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
    private final Meters meters;
    private final UnderstandingWorkers workers;
    private ProcessorContext<Void, Emission> context;
    private ReadOnlyKeyValueStore<String, Extraction> cache;
    private DeadLetters letters;

    // With a remote model only; touched by the stream thread, except outcomes (filled by the workers).
    private KeyValueStore<String, PendingPassage> pending;
    private long pendingCount;
    /** Passages holding a worker slot: in a call, or waiting until {@link Held#retryAtMs} to be tried again. */
    private final Map<String, Held> held = new HashMap<>();

    private final ConcurrentLinkedQueue<UnderstandingWorkers.Outcome> outcomes = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /** A passage with a slot: how many times it failed transiently, and when it may go again (0: it is in a call). */
    private record Held(int failures, long retryAtMs) {}

    /**
     * @param cacheStore name of the global extraction-cache store, or null to extract every time
     */
    public UnderstandProcessor(Understander understander, String cacheStore, Meters meters) {
        this(understander, cacheStore, meters, null);
    }

    private UnderstandProcessor(
            Understander understander, String cacheStore, Meters meters, UnderstandingWorkers workers) {
        this.understander = understander;
        this.cacheStore = cacheStore;
        this.meters = meters;
        this.workers = workers;
    }

    /**
     * The step over {@code workers}' remote model, with its pending store.
     *
     * @param cacheStore name of the global extraction-cache store, or null to extract every time
     */
    public static ProcessorSupplier<String, PassageEvent, Void, Emission> deferred(
            UnderstandingWorkers workers, String cacheStore, Meters meters) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, PassageEvent, Void, Emission> get() {
                return new UnderstandProcessor(workers.understander(), cacheStore, meters, workers);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                return Set.of(StateStores.UNDERSTAND_PENDING.builder());
            }
        };
    }

    /** The cache key of a passage's extraction. */
    public static String cacheKey(String contentHash, String extractorId) {
        return contentHash + "|" + extractorId;
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
        this.cache = cacheStore == null ? null : context.getStateStore(cacheStore);
        this.letters = new DeadLetters(context, DeadLetter.Stage.UNDERSTAND, meters, UnderstandProcessor::classify);
        if (workers != null) {
            pending = context.getStateStore(StateStores.UNDERSTAND_PENDING.name());
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
        long t0 = System.nanoTime();
        letters.call(record, DeadLetters.utf8(record.key()), () -> Json.toBytes(upsert), () -> {
                    String key = cacheKey(
                            upsert.contentHash(), understander.extractor().id());
                    Extraction extraction = cached(key);
                    if (extraction == null) {
                        extraction = understander.extract(upsert);
                        extracted(record.timestamp(), record.headers(), upsert, key, extraction);
                    }
                    return understood(upsert, understander.embed(upsert, extraction), System.nanoTime() - t0);
                })
                .ifPresent(event -> forward(record, new Emission.Understood(event)));
    }

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
        if (cache != null) {
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
        if (!understander.embedder().remote()) {
            // A cached extraction and a local embedder: nothing remote to wait for.
            String key = cacheKey(upsert.contentHash(), understander.extractor().id());
            if (cache != null && cache.get(key) != null) {
                drop(record.key());
                understandInline(record, upsert);
                return;
            }
        }
        RecordMetadata meta = context.recordMetadata().orElse(null);
        PendingPassage passage = new PendingPassage(
                upsert,
                meta == null ? "" : meta.topic(),
                meta == null ? -1 : meta.partition(),
                meta == null ? -1 : meta.offset(),
                record.timestamp(),
                context.currentSystemTimeMs());
        if (pending.get(record.key()) == null) {
            count(1);
        }
        pending.put(record.key(), passage);
        if (held.containsKey(record.key())) {
            // Keep the slot; the call for the older upsert finishes on its own and is dropped.
            held.put(record.key(), new Held(0, 0));
            start(record.key(), upsert);
        } else if (workers.tryAcquire()) {
            held.put(record.key(), new Held(0, 0));
            start(record.key(), upsert);
        }
    }

    /** Forgets a passage's pending upsert, if it has one, and frees its slot. */
    private void drop(String passageId) {
        if (pending.delete(passageId) != null) {
            count(-1);
        }
        if (held.remove(passageId) != null) {
            workers.release();
        }
    }

    private void start(String passageId, PassageEvent.Upsert upsert) {
        String key = cacheKey(upsert.contentHash(), understander.extractor().id());
        Extraction cachedExtraction = cached(key);
        workers.submit(upsert, key, cachedExtraction, outcome -> {
            if (!closed) {
                outcomes.add(outcome);
            }
        });
        LOG.trace("passage {} handed to a worker", passageId);
    }

    /** Emits the outcomes the workers have, then hands over what may go: retries that are due, then new passages. */
    private void poll(long now) {
        for (UnderstandingWorkers.Outcome outcome; (outcome = outcomes.poll()) != null; ) {
            settle(outcome, now);
        }
        for (Map.Entry<String, Held> e : List.copyOf(held.entrySet())) {
            Held h = e.getValue();
            if (h.retryAtMs() > 0 && h.retryAtMs() <= now) {
                PendingPassage p = pending.get(e.getKey());
                if (p == null) {
                    drop(e.getKey());
                } else {
                    held.put(e.getKey(), new Held(h.failures(), 0));
                    start(e.getKey(), p.passage());
                }
            }
        }
        if (held.size() < pendingCount) {
            List<KeyValue<String, PendingPassage>> next = new ArrayList<>();
            try (KeyValueIterator<String, PendingPassage> it = pending.all()) {
                while (it.hasNext()) {
                    KeyValue<String, PendingPassage> kv = it.next();
                    if (!held.containsKey(kv.key)) {
                        if (!workers.tryAcquire()) {
                            break;
                        }
                        next.add(kv);
                    }
                }
            }
            for (KeyValue<String, PendingPassage> kv : next) {
                held.put(kv.key, new Held(0, 0));
                start(kv.key, kv.value.passage());
            }
        }
    }

    private void settle(UnderstandingWorkers.Outcome outcome, long now) {
        String passageId = outcome.passage().passageId();
        PendingPassage p = pending.get(passageId);
        if (outcome instanceof UnderstandingWorkers.Understood u && u.extracted()) {
            // Paid for, so counted and cached even when its passage was replaced or retracted meanwhile.
            extracted(
                    p == null ? now : p.timestamp(),
                    new RecordHeaders(),
                    u.passage(),
                    cacheKey(u.passage().contentHash(), understander.extractor().id()),
                    u.extraction());
        }
        if (p == null || !p.passage().equals(outcome.passage())) {
            return; // replaced or retracted while it was being understood
        }
        switch (outcome) {
            case UnderstandingWorkers.Understood u -> {
                UnderstandingEvent event = understood(u.passage(), u.understanding(), u.nanos());
                drop(passageId);
                context.forward(new Record<Void, Emission>(
                        null, new Emission.Understood(event), p.timestamp(), new RecordHeaders()));
            }
            case UnderstandingWorkers.Failed f -> {
                Duration waited = Duration.ofMillis(now - p.firstSeenMs());
                UnderstandingWorkers.Settings settings = workers.settings();
                if (f.transientFailure() && waited.compareTo(settings.retryFor()) < 0) {
                    int failures = held.getOrDefault(passageId, new Held(0, 0)).failures() + 1;
                    Duration backoff = settings.backoff(failures);
                    held.put(passageId, new Held(failures, now + Math.max(1, backoff.toMillis())));
                    meters.understandRetry();
                    LOG.warn(
                            "passage {} failed transiently ({} time(s)); trying again in {}: {}",
                            passageId,
                            failures,
                            backoff,
                            f.error().getMessage());
                    return;
                }
                DeadLetters.Failure failure = f.transientFailure()
                        ? new DeadLetters.Failure(
                                DeadLetter.Cause.EXTRACTOR_UNAVAILABLE,
                                "the model stayed unavailable for " + waited + ": "
                                        + f.error().getMessage())
                        : classify(f.error());
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
        if (workers == null) {
            return;
        }
        closed = true;
        outcomes.clear();
        for (Iterator<String> it = held.keySet().iterator(); it.hasNext(); ) {
            it.next();
            it.remove();
            workers.release();
        }
        workers.pending(-pendingCount);
        pendingCount = 0;
    }
}
