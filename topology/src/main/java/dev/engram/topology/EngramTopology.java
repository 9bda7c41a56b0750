package dev.engram.topology;

import dev.engram.processors.ConstructProcessor;
import dev.engram.processors.Emission;
import dev.engram.processors.Meters;
import dev.engram.processors.ReadProcessor;
import dev.engram.processors.UnderstandProcessor;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.JsonSerde;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.Stores;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.Understander;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * The Engram topology: READ (documents → passages + manifests), UNDERSTAND (passages → understandings, keyed by
 * namespace), CONSTRUCT (understandings → namespace-owned memory stores + memory changes). Every operator, store and
 * sink is named, so the topology survives upgrades without losing state.
 */
public final class EngramTopology {

    public static final Serde<PassageEvent> PASSAGE_SERDE = JsonSerde.of(PassageEvent.class);
    public static final Serde<UnderstandingEvent> UNDERSTANDING_SERDE = JsonSerde.of(UnderstandingEvent.class);
    public static final Serde<MemoryChange> MEMORY_CHANGE_SERDE = JsonSerde.of(MemoryChange.class);
    public static final Serde<DeadLetter> DEAD_LETTER_SERDE = JsonSerde.of(DeadLetter.class);

    private EngramTopology() {}

    public static Topology build(
            Topics topics, int maxDocumentBytes, int chunkMaxTokens, Understander understander, Meters meters) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(store(Stores.READ_DOCUMENTS, Stores.DOCUMENT_STATE));
        builder.addStateStore(store(Stores.MEMORY_DOCUMENTS, Stores.DOCUMENT_RECORD));
        builder.addStateStore(store(Stores.MEMORY_PASSAGES, Stores.PASSAGE));
        builder.addStateStore(store(Stores.MEMORY_VECTORS, Stores.VECTOR));
        builder.addStateStore(store(Stores.MEMORY_EMBEDDINGS, Stores.EMBEDDINGS));
        builder.addStateStore(store(Stores.MEMORY_REVIEWS, Stores.REVIEW));
        builder.addStateStore(store(Stores.MEMORY_ENTITIES, Stores.ENTITY));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_PASSAGES, Stores.MENTION_COUNT));
        builder.addStateStore(store(Stores.MEMORY_NAMESPACES, Stores.NAMESPACE));

        DocumentDecoder decoder = new DocumentDecoder(maxDocumentBytes);
        Chunker chunker = new Chunker(chunkMaxTokens);
        KStream<Void, Emission> read = builder.stream(
                        topics.documents(),
                        Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("documents-source"))
                .process(() -> new ReadProcessor(decoder, chunker, meters), Named.as("read"), Stores.READ_DOCUMENTS);
        route(read, "read", topics);

        String cache = null;
        if (understander.extractor().cacheable()) {
            cache = Stores.EXTRACTION_CACHE;
            builder.addGlobalStore(
                    org.apache.kafka.streams.state.Stores.keyValueStoreBuilder(
                                    org.apache.kafka.streams.state.Stores.persistentKeyValueStore(cache),
                                    Stores.KEY,
                                    Stores.EXTRACTION)
                            .withLoggingDisabled(),
                    topics.extractions(),
                    Consumed.with(Serdes.String(), Stores.EXTRACTION).withName("extractions-source"),
                    () -> new CacheLoader(Stores.EXTRACTION_CACHE));
        }
        String cacheStore = cache;
        KStream<Void, Emission> understood = builder.stream(
                        topics.passages(),
                        Consumed.with(Serdes.String(), PASSAGE_SERDE).withName("passages-source"))
                .process(() -> new UnderstandProcessor(understander, cacheStore, meters), Named.as("understand"));
        route(understood, "understand", topics);

        KStream<Void, Emission> constructed = builder.stream(
                        topics.understandings(),
                        Consumed.with(Serdes.String(), UNDERSTANDING_SERDE).withName("understandings-source"))
                .process(
                        () -> new ConstructProcessor(meters),
                        Named.as("construct"),
                        Stores.MEMORY_DOCUMENTS,
                        Stores.MEMORY_PASSAGES,
                        Stores.MEMORY_VECTORS,
                        Stores.MEMORY_EMBEDDINGS,
                        Stores.MEMORY_REVIEWS,
                        Stores.MEMORY_ENTITIES,
                        Stores.MEMORY_ENTITY_PASSAGES,
                        Stores.MEMORY_NAMESPACES);
        route(constructed, "construct", topics);
        return builder.build();
    }

    /** Sends each emission of a step to its topic, keyed as that topic's schema says. */
    private static void route(KStream<Void, Emission> emissions, String step, Topics topics) {
        emissions
                .split(Named.as(step + "-"))
                .branch(
                        (k, v) -> v instanceof Emission.Passage,
                        Branched.<Void, Emission>withConsumer(s -> s.map(
                                                (k, v) -> {
                                                    PassageEvent e = ((Emission.Passage) v).event();
                                                    return KeyValue.pair(e.passageId(), e);
                                                },
                                                Named.as(step + "-passages-key"))
                                        .to(
                                                topics.passages(),
                                                Produced.with(Serdes.String(), PASSAGE_SERDE)
                                                        .withName(step + "-passages-sink")))
                                .withName("passages"))
                .branch(
                        (k, v) -> v instanceof Emission.Understood,
                        Branched.<Void, Emission>withConsumer(s -> s.map(
                                                (k, v) -> {
                                                    UnderstandingEvent e = ((Emission.Understood) v).event();
                                                    return KeyValue.pair(e.namespace(), e);
                                                },
                                                Named.as(step + "-understandings-key"))
                                        .to(
                                                topics.understandings(),
                                                Produced.with(Serdes.String(), UNDERSTANDING_SERDE)
                                                        .withName(step + "-understandings-sink")))
                                .withName("understandings"))
                .branch(
                        (k, v) -> v instanceof Emission.Change,
                        Branched.<Void, Emission>withConsumer(s -> s.map(
                                                (k, v) -> {
                                                    MemoryChange c = ((Emission.Change) v).change();
                                                    return KeyValue.pair(c.namespace(), c);
                                                },
                                                Named.as(step + "-changes-key"))
                                        .to(
                                                topics.memoryChanges(),
                                                Produced.with(Serdes.String(), MEMORY_CHANGE_SERDE)
                                                        .withName(step + "-changes-sink")))
                                .withName("changes"))
                .branch(
                        (k, v) -> v instanceof Emission.Extracted,
                        Branched.<Void, Emission>withConsumer(s -> s.map(
                                                (k, v) -> {
                                                    Emission.Extracted e = (Emission.Extracted) v;
                                                    return KeyValue.pair(e.cacheKey(), e.extraction());
                                                },
                                                Named.as(step + "-extractions-key"))
                                        .to(
                                                topics.extractions(),
                                                Produced.with(Serdes.String(), Stores.EXTRACTION)
                                                        .withName(step + "-extractions-sink")))
                                .withName("extractions"))
                .branch(
                        (k, v) -> v instanceof Emission.Dead,
                        Branched.<Void, Emission>withConsumer(s -> s.map(
                                                (k, v) -> {
                                                    Emission.Dead d = (Emission.Dead) v;
                                                    return KeyValue.pair(d.key(), d.letter());
                                                },
                                                Named.as(step + "-dead-letters-key"))
                                        .to(
                                                topics.deadLetters(),
                                                Produced.with(Serdes.ByteArray(), DEAD_LETTER_SERDE)
                                                        .withName(step + "-dead-letters-sink")))
                                .withName("dead-letters"));
    }

    /** Keeps the global extraction cache in step with the extractions topic (a null value deletes). */
    static final class CacheLoader
            implements org.apache.kafka.streams.processor.api.Processor<String, Extraction, Void, Void> {
        private final String storeName;
        private org.apache.kafka.streams.state.KeyValueStore<String, Extraction> store;

        CacheLoader(String storeName) {
            this.storeName = storeName;
        }

        @Override
        public void init(org.apache.kafka.streams.processor.api.ProcessorContext<Void, Void> context) {
            store = context.getStateStore(storeName);
        }

        @Override
        public void process(org.apache.kafka.streams.processor.api.Record<String, Extraction> record) {
            if (record.value() == null) {
                store.delete(record.key());
            } else {
                store.put(record.key(), record.value());
            }
        }
    }

    private static <V> StoreBuilder<?> store(String name, Serde<V> values) {
        KeyValueBytesStoreSupplier supplier = org.apache.kafka.streams.state.Stores.persistentKeyValueStore(name);
        return org.apache.kafka.streams.state.Stores.keyValueStoreBuilder(supplier, Stores.KEY, values);
    }
}
