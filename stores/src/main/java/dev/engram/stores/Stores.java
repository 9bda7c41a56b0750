package dev.engram.stores;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.JsonSerde;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/** Every state store of Engram: its name and its serdes. Keys are strings (see {@link Keys}). */
public final class Stores {

    /** Read step: document key (namespace, id) → the passages of its latest version. */
    public static final String READ_DOCUMENTS = "read-documents";
    /** Memory step: (namespace, document id) → the document's manifest and status. */
    public static final String MEMORY_DOCUMENTS = "memory-documents";
    /** Memory step: (namespace, passage id) → the passage with its understanding. */
    public static final String MEMORY_PASSAGES = "memory-passages";
    /** Memory step: (namespace, passage id) → float32 embedding. */
    public static final String MEMORY_VECTORS = "memory-vectors";
    /** Memory step: (namespace, passage id) → every embedding of the passage (memory, entities, facts, questions). */
    public static final String MEMORY_EMBEDDINGS = "memory-embeddings";
    /** Memory step: (namespace, surface entity id) → surface entity with reference counts and its resolved entity. */
    public static final String MEMORY_ENTITIES = "memory-entities";
    /** Memory step: (namespace, surface entity id, passage id) → the mention with its provenance. */
    public static final String MEMORY_ENTITY_PASSAGES = "memory-entity-passages";
    /** Memory step: (namespace, block kind, block key, surface entity id) → normalized name: the blocking indexes. */
    public static final String MEMORY_ENTITY_INDEX = "memory-entity-index";
    /** Memory step: (namespace, surface id, other surface id) → resolution decision, stored in both directions. */
    public static final String MEMORY_ENTITY_PAIRS = "memory-entity-pairs";
    /** Memory step: (namespace, surface id, other surface id) → an operator's split or merge, in both directions. */
    public static final String MEMORY_ENTITY_OVERRIDES = "memory-entity-overrides";
    /** Memory step: (namespace, surface entity id) → float32 "name: description" embedding of its representative. */
    public static final String MEMORY_ENTITY_VECTORS = "memory-entity-vectors";
    /** Memory step: (namespace, passage id) → the passage's surface entities as "id type" lines. */
    public static final String MEMORY_PASSAGE_ENTITIES = "memory-passage-entities";
    /** Memory step: (namespace, resolved entity id, surface id) → surface normalized name: the resolved groups. */
    public static final String MEMORY_ENTITY_MEMBERS = "memory-entity-members";
    /** Understand step (global): "content hash|extractor id" → cached extraction, from the extractions topic. */
    public static final String EXTRACTION_CACHE = "extraction-cache";
    /** Memory step: (namespace, passage id, index) → an entity or fact that failed verification, for review. */
    public static final String MEMORY_REVIEWS = "memory-reviews";
    /** Memory step: (namespace, document id) → the document's gist and episodic windows. */
    public static final String MEMORY_GISTS = "memory-gists";
    /** Memory step: namespace → its eigen-themes. */
    public static final String MEMORY_THEMES = "memory-themes";
    /** Memory step: namespace → counters and watermark. */
    public static final String MEMORY_NAMESPACES = "memory-namespaces";

    public static final Serde<String> KEY = Serdes.String();
    public static final Serde<DocumentState> DOCUMENT_STATE = JsonSerde.of(DocumentState.class);
    public static final Serde<DocumentRecord> DOCUMENT_RECORD = JsonSerde.of(DocumentRecord.class);
    public static final Serde<StoredPassage> PASSAGE = JsonSerde.of(StoredPassage.class);
    public static final Serde<byte[]> VECTOR = Serdes.ByteArray();
    public static final Serde<EntityRecord> ENTITY = JsonSerde.of(EntityRecord.class);
    public static final Serde<MentionRecord> MENTION = JsonSerde.of(MentionRecord.class);
    public static final Serde<PairDecision> PAIR = JsonSerde.of(PairDecision.class);
    public static final Serde<String> TEXT = Serdes.String();
    public static final Serde<DocumentGist> GIST = JsonSerde.of(DocumentGist.class);
    public static final Serde<ThemeSet> THEMES = JsonSerde.of(ThemeSet.class);
    public static final Serde<NamespaceState> NAMESPACE = JsonSerde.of(NamespaceState.class);
    public static final Serde<Extraction> EXTRACTION = JsonSerde.of(Extraction.class);
    public static final Serde<Embeddings> EMBEDDINGS = new EmbeddingsSerde();
    public static final Serde<ReviewItem> REVIEW = JsonSerde.of(ReviewItem.class);

    private Stores() {}
}
