package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.understanding.Understander;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The extraction cache as the understand step uses it: the key a passage's extraction is cached under (see
 * {@link ExtractionCacheScope}), lookups counted as hits or misses, and extractions paid for, counted and sent on to be
 * cached.
 */
final class ExtractionCache {

    private final ProcessorContext<Void, Emission> context;
    private final Understander understander;
    private final ExtractionCacheScope scope;
    private final Meters meters;
    /** The global extraction-cache store, or null to extract every time. */
    private final ReadOnlyKeyValueStore<String, Extraction> cache;

    /**
     * @param cacheStore name of the global extraction-cache store, or null to extract every time
     */
    ExtractionCache(
            ProcessorContext<Void, Emission> context,
            String cacheStore,
            Understander understander,
            ExtractionCacheScope scope,
            Meters meters) {
        this.context = context;
        this.cache = cacheStore == null ? null : context.getStateStore(cacheStore);
        this.understander = understander;
        this.scope = scope;
        this.meters = meters;
    }

    String key(PassageEvent.Upsert upsert) {
        return scope.key(upsert, understander.extractor().id(upsert.namespace()));
    }

    /** The cached extraction under {@code key} (counted as a hit or a miss), or null. */
    Extraction cached(String key) {
        if (cache == null) {
            return null;
        }
        Extraction extraction = cache.get(key);
        meters.extractionCache(extraction != null);
        return extraction;
    }

    /** Counts what an extraction cost and, when it is worth it, caches it. */
    void extracted(long timestamp, Headers headers, PassageEvent.Upsert upsert, String key, Extraction extraction) {
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
}
