package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.Understander;
import java.time.Duration;
import java.util.Optional;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * UNDERSTAND: stateless and parallel over passage ids. An upserted passage is extracted — or its extraction is taken
 * from the cache of (content hash, extractor id), so replays, restarts and re-embeddings never pay an LLM twice — then
 * embedded; a retraction passes through. A passage that cannot be understood becomes a dead letter.
 */
public final class UnderstandProcessor implements Processor<String, PassageEvent, Void, Emission> {

    private final Understander understander;
    private final String cacheStore;
    private final Meters meters;
    private ProcessorContext<Void, Emission> context;
    private ReadOnlyKeyValueStore<String, Extraction> cache;
    private DeadLetters letters;

    /**
     * @param cacheStore name of the global extraction-cache store, or null to extract every time
     */
    public UnderstandProcessor(Understander understander, String cacheStore, Meters meters) {
        this.understander = understander;
        this.cacheStore = cacheStore;
        this.meters = meters;
    }

    /** The cache key of a passage's extraction. */
    public static String cacheKey(String contentHash, String extractorId) {
        return contentHash + "|" + extractorId;
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
        this.cache = cacheStore == null ? null : context.getStateStore(cacheStore);
        this.letters = new DeadLetters(
                context,
                DeadLetter.Stage.UNDERSTAND,
                meters,
                e -> e instanceof ExtractionException
                        ? new DeadLetters.Failure(DeadLetter.Cause.EXTRACTOR_ERROR, e.getMessage())
                        : new DeadLetters.Failure(DeadLetter.Cause.ERROR, "understanding failed: " + e));
    }

    @Override
    public void process(Record<String, PassageEvent> record) {
        Optional<UnderstandingEvent> out =
                switch (record.value()) {
                    case PassageEvent.Upsert upsert -> {
                        long t0 = System.nanoTime();
                        yield letters.call(
                                record,
                                DeadLetters.utf8(record.key()),
                                () -> Json.toBytes(upsert),
                                () -> understand(record, upsert, t0));
                    }
                    case PassageEvent.Retraction retraction ->
                        Optional.of(new UnderstandingEvent.Retracted(retraction));
                };
        out.ifPresent(event -> forward(record, new Emission.Understood(event)));
    }

    /** Extracts (or takes the cached extraction) and embeds; throws when the passage cannot be understood. */
    private UnderstandingEvent understand(Record<String, PassageEvent> record, PassageEvent.Upsert upsert, long t0) {
        String extractor = understander.extractor().id();
        String key = cacheKey(upsert.contentHash(), extractor);
        Extraction extraction = cache == null ? null : cache.get(key);
        if (cache != null) {
            meters.extractionCache(extraction != null);
        }
        if (extraction == null) {
            extraction = understander.extract(upsert);
            meters.extractionUsage(upsert.namespace(), extraction);
            if (cache != null) {
                forward(record, new Emission.Extracted(key, extraction));
            }
        }
        Understanding understanding = understander.embed(upsert, extraction);
        meters.understood(extractor, Duration.ofNanos(System.nanoTime() - t0));
        return new UnderstandingEvent.Understood(upsert, understanding);
    }

    private void forward(Record<String, PassageEvent> record, Emission emission) {
        context.forward(new Record<Void, Emission>(null, emission, record.timestamp(), record.headers()));
    }
}
