package dev.engram.processors;

import dev.engram.schemas.Embeddings;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryLogEntry;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.PairDecision;
import dev.engram.stores.ReadCache;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.ThemeSet;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Every store of the memory step (see {@link StateStores#MEMORY}), opened once per processor (each time the task is
 * initialized, so the caches never outlive what their stores hold), with the caches of decoded values it reads most.
 */
record MemoryStores(
        KeyValueStore<String, DocumentRecord> documents,
        KeyValueStore<String, StoredPassage> passages,
        KeyValueStore<String, byte[]> vectors,
        KeyValueStore<String, Embeddings> embeddings,
        KeyValueStore<String, ReviewItem> reviews,
        KeyValueStore<String, EntityRecord> entities,
        KeyValueStore<String, MentionRecord> mentions,
        KeyValueStore<String, String> index,
        KeyValueStore<String, PairDecision> pairs,
        KeyValueStore<String, String> members,
        KeyValueStore<String, byte[]> entityVectors,
        KeyValueStore<String, PairDecision> overrides,
        KeyValueStore<String, String> passageEntities,
        KeyValueStore<String, DocumentGist> gists,
        KeyValueStore<String, ThemeSet> themes,
        KeyValueStore<String, MirrorEntry> mirror,
        KeyValueStore<String, MirrorEntry> compensated,
        KeyValueStore<String, MemoryLogEntry> log,
        KeyValueStore<String, NamespaceState> namespaces,
        ReadCache<EntityRecord> entityCache) {

    /**
     * Decoded surface entities kept per processor: entity resolution reads the candidates of every touched name's
     * blocks for each record, mostly the same ones. About a kilobyte each, and as much again for the parsed names kept
     * beside them ({@code PairDecider.Names}): some 40 MB of heap per partition of the memory step at most.
     */
    static final int ENTITY_CACHE = 20_000;

    /** The stores as the processor's context holds them. */
    static MemoryStores open(ProcessorContext<?, ?> context) {
        return new MemoryStores(
                context.getStateStore(StateStores.MEMORY_DOCUMENTS.name()),
                context.getStateStore(StateStores.MEMORY_PASSAGES.name()),
                context.getStateStore(StateStores.MEMORY_VECTORS.name()),
                context.getStateStore(StateStores.MEMORY_EMBEDDINGS.name()),
                context.getStateStore(StateStores.MEMORY_REVIEWS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITIES.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_PASSAGES.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_INDEX.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_PAIRS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_MEMBERS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_VECTORS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_OVERRIDES.name()),
                context.getStateStore(StateStores.MEMORY_PASSAGE_ENTITIES.name()),
                context.getStateStore(StateStores.MEMORY_GISTS.name()),
                context.getStateStore(StateStores.MEMORY_THEMES.name()),
                context.getStateStore(StateStores.MEMORY_MIRROR.name()),
                context.getStateStore(StateStores.MEMORY_MIRROR_COMPENSATED.name()),
                context.getStateStore(StateStores.MEMORY_LOG.name()),
                context.getStateStore(StateStores.MEMORY_NAMESPACES.name()),
                new ReadCache<>(ENTITY_CACHE));
    }
}
