package dev.engram.stores;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.JsonSerde;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;

/** Every state store of Engram, declared once: name and value serde. Keys are strings (see {@link Keys}). */
public final class StateStores {

    /** Read step: document key (namespace, id) → the passages of its latest version. */
    public static final StoreSpec<DocumentState> READ_DOCUMENTS =
            new StoreSpec<>("read-documents", JsonSerde.of(DocumentState.class));
    /** Memory step: (namespace, document id) → the document's manifest and status. */
    public static final StoreSpec<DocumentRecord> MEMORY_DOCUMENTS =
            new StoreSpec<>("memory-documents", JsonSerde.of(DocumentRecord.class));
    /** Memory step: (namespace, passage id) → the passage with its understanding. */
    public static final StoreSpec<StoredPassage> MEMORY_PASSAGES =
            new StoreSpec<>("memory-passages", JsonSerde.of(StoredPassage.class));
    /** Memory step: (namespace, passage id) → float32 embedding. */
    public static final StoreSpec<byte[]> MEMORY_VECTORS = new StoreSpec<>("memory-vectors", Serdes.ByteArray());
    /** Memory step: (namespace, passage id) → every embedding of the passage (memory, entities, facts, questions). */
    public static final StoreSpec<Embeddings> MEMORY_EMBEDDINGS =
            new StoreSpec<>("memory-embeddings", new EmbeddingsSerde());
    /** Memory step: (namespace, passage id, index) → an entity or fact that failed verification, for review. */
    public static final StoreSpec<ReviewItem> MEMORY_REVIEWS =
            new StoreSpec<>("memory-reviews", JsonSerde.of(ReviewItem.class));
    /** Memory step: (namespace, surface entity id) → surface entity with reference counts and its resolved entity. */
    public static final StoreSpec<EntityRecord> MEMORY_ENTITIES =
            new StoreSpec<>("memory-entities", JsonSerde.of(EntityRecord.class));
    /** Memory step: (namespace, surface entity id, passage id) → the mention with its provenance. */
    public static final StoreSpec<MentionRecord> MEMORY_ENTITY_PASSAGES =
            new StoreSpec<>("memory-entity-passages", JsonSerde.of(MentionRecord.class));
    /** Memory step: (namespace, block key (see {@link BlockKeys}), surface entity id) → normalized name. */
    public static final StoreSpec<String> MEMORY_ENTITY_INDEX = new StoreSpec<>("memory-entity-index", Serdes.String());
    /** Memory step: (namespace, surface id, other surface id) → resolution decision, stored in both directions. */
    public static final StoreSpec<PairDecision> MEMORY_ENTITY_PAIRS =
            new StoreSpec<>("memory-entity-pairs", JsonSerde.of(PairDecision.class));
    /** Memory step: (namespace, resolved entity id, surface id) → surface normalized name: the resolved groups. */
    public static final StoreSpec<String> MEMORY_ENTITY_MEMBERS =
            new StoreSpec<>("memory-entity-members", Serdes.String());
    /** Memory step: (namespace, surface entity id) → float32 "name: description" embedding of its representative. */
    public static final StoreSpec<byte[]> MEMORY_ENTITY_VECTORS =
            new StoreSpec<>("memory-entity-vectors", Serdes.ByteArray());
    /** Memory step: (namespace, surface id, other surface id) → an operator's split or merge, in both directions. */
    public static final StoreSpec<PairDecision> MEMORY_ENTITY_OVERRIDES =
            new StoreSpec<>("memory-entity-overrides", JsonSerde.of(PairDecision.class));
    /** Memory step: (namespace, passage id) → the passage's surface entities as "id type name" lines. */
    public static final StoreSpec<String> MEMORY_PASSAGE_ENTITIES =
            new StoreSpec<>("memory-passage-entities", Serdes.String());
    /** Memory step: (namespace, document id) → the document's gist entries. */
    public static final StoreSpec<DocumentGist> MEMORY_GISTS =
            new StoreSpec<>("memory-gists", JsonSerde.of(DocumentGist.class));
    /** Memory step: namespace → its eigen-themes. */
    public static final StoreSpec<ThemeSet> MEMORY_THEMES =
            new StoreSpec<>("memory-themes", JsonSerde.of(ThemeSet.class));
    /** Memory step: (namespace, mirror kind, object id) → the object's version and sync state with the mirrors. */
    public static final StoreSpec<MirrorEntry> MEMORY_MIRROR =
            new StoreSpec<>("memory-mirror", JsonSerde.of(MirrorEntry.class));
    /** Memory step: (namespace, mirror kind, object id) → objects a mirror rejected, until a repair writes them. */
    public static final StoreSpec<MirrorEntry> MEMORY_MIRROR_COMPENSATED =
            new StoreSpec<>("memory-mirror-compensated", JsonSerde.of(MirrorEntry.class));
    /**
     * Memory step: (namespace, version) → what the transaction that reached the version changed (see {@link
     * MemoryLogEntry}); the newest {@link MemoryLogEntry#KEPT_VERSIONS} versions of each namespace.
     */
    public static final StoreSpec<MemoryLogEntry> MEMORY_LOG =
            new StoreSpec<>("memory-log", JsonSerde.of(MemoryLogEntry.class));
    /** Memory step: namespace → counters and watermark. */
    public static final StoreSpec<NamespaceState> MEMORY_NAMESPACES =
            new StoreSpec<>("memory-namespaces", JsonSerde.of(NamespaceState.class));
    /**
     * Understand step, with a remote model: passage id → the latest upsert of the passage while a worker understands
     * it (or waits to retry through an outage); removed when it is understood, dead-lettered, retracted or replaced.
     */
    public static final StoreSpec<PendingPassage> UNDERSTAND_PENDING =
            new StoreSpec<>("understand-pending", JsonSerde.of(PendingPassage.class));
    /** Read step: an outcome ("engram.documents/upserted", a dead letter's stage and cause) → how many, committed. */
    public static final StoreSpec<Long> READ_TALLY = new StoreSpec<>("read-tally", Serdes.Long());
    /** Understand step: a dead letter's stage and cause → how many, committed. */
    public static final StoreSpec<Long> UNDERSTAND_TALLY = new StoreSpec<>("understand-tally", Serdes.Long());
    /** Memory step: a dead letter's stage and cause → how many, committed. */
    public static final StoreSpec<Long> MEMORY_TALLY = new StoreSpec<>("memory-tally", Serdes.Long());
    /** Understand step (global): "content hash|extractor id" → cached extraction, from the extractions topic. */
    public static final StoreSpec<Extraction> EXTRACTION_CACHE =
            new StoreSpec<>("extraction-cache", JsonSerde.of(Extraction.class));

    /** The stores of the memory step, all owned by its one processor. */
    public static final List<StoreSpec<?>> MEMORY = List.of(
            MEMORY_DOCUMENTS,
            MEMORY_PASSAGES,
            MEMORY_VECTORS,
            MEMORY_EMBEDDINGS,
            MEMORY_REVIEWS,
            MEMORY_ENTITIES,
            MEMORY_ENTITY_PASSAGES,
            MEMORY_ENTITY_INDEX,
            MEMORY_ENTITY_PAIRS,
            MEMORY_ENTITY_MEMBERS,
            MEMORY_ENTITY_VECTORS,
            MEMORY_ENTITY_OVERRIDES,
            MEMORY_PASSAGE_ENTITIES,
            MEMORY_GISTS,
            MEMORY_THEMES,
            MEMORY_MIRROR,
            MEMORY_MIRROR_COMPENSATED,
            MEMORY_LOG,
            MEMORY_NAMESPACES);

    private StateStores() {}
}
