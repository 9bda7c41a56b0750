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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.streams.errors.StreamsException;
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
    }

    @Override
    public void process(Record<String, PassageEvent> record) {
        UnderstandingEvent out =
                switch (record.value()) {
                    case PassageEvent.Upsert upsert -> understand(record, upsert);
                    case PassageEvent.Retraction retraction -> new UnderstandingEvent.Retracted(retraction);
                };
        if (out != null) {
            forward(record, new Emission.Understood(out));
        }
    }

    private UnderstandingEvent understand(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        long t0 = System.nanoTime();
        String extractor = understander.extractor().id();
        try {
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
        } catch (StreamsException e) {
            throw e;
        } catch (RuntimeException e) {
            String cause = e instanceof ExtractionException ? "extractor_error" : "error";
            meters.deadLetter("understand", cause);
            String reason = e instanceof ExtractionException ? e.getMessage() : "understanding failed: " + e;
            byte[] key = record.key() == null ? null : record.key().getBytes(StandardCharsets.UTF_8);
            forward(record, DeadLetters.of(context, DeadLetter.Stage.UNDERSTAND, reason, key, Json.toBytes(upsert)));
            return null;
        }
    }

    private void forward(Record<String, PassageEvent> record, Emission emission) {
        context.forward(new Record<Void, Emission>(null, emission, record.timestamp(), record.headers()));
    }
}
