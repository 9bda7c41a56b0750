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
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.Stores;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.Understander;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.BranchedKStream;
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
    public static final Serde<MemoryCommand> MEMORY_COMMAND_SERDE = JsonSerde.of(MemoryCommand.class);
    public static final Serde<DeadLetter> DEAD_LETTER_SERDE = JsonSerde.of(DeadLetter.class);

    private EngramTopology() {}

    /** Which steps a topology holds; a service runs INGEST and MEMORY as two Streams applications. */
    public enum Part {
        /** READ and UNDERSTAND: stateless-heavy work, scaled by passages. */
        INGEST,
        /** CONSTRUCT: the namespace-owned memory stores, never starved by expensive understanding. */
        MEMORY,
        /** Both, in one topology (tests, single-application use). */
        ALL
    }

    public static Topology build(
            Topics topics, int maxDocumentBytes, int chunkMaxTokens, Understander understander, Meters meters) {
        return build(topics, maxDocumentBytes, chunkMaxTokens, understander, meters, Part.ALL);
    }

    public static Topology build(
            Topics topics,
            int maxDocumentBytes,
            int chunkMaxTokens,
            Understander understander,
            Meters meters,
            Part part) {
        StreamsBuilder builder = new StreamsBuilder();
        if (part != Part.MEMORY) {
            buildIngest(builder, topics, maxDocumentBytes, chunkMaxTokens, understander, meters);
        }
        if (part != Part.INGEST) {
            buildMemory(builder, topics, meters);
        }
        return builder.build();
    }

    private static void buildIngest(
            StreamsBuilder builder,
            Topics topics,
            int maxDocumentBytes,
            int chunkMaxTokens,
            Understander understander,
            Meters meters) {
        builder.addStateStore(store(Stores.READ_DOCUMENTS, Stores.DOCUMENT_STATE));
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
    }

    private static void buildMemory(StreamsBuilder builder, Topics topics, Meters meters) {
        builder.addStateStore(store(Stores.MEMORY_DOCUMENTS, Stores.DOCUMENT_RECORD));
        builder.addStateStore(store(Stores.MEMORY_PASSAGES, Stores.PASSAGE));
        builder.addStateStore(store(Stores.MEMORY_VECTORS, Stores.VECTOR));
        builder.addStateStore(store(Stores.MEMORY_EMBEDDINGS, Stores.EMBEDDINGS));
        builder.addStateStore(store(Stores.MEMORY_REVIEWS, Stores.REVIEW));
        builder.addStateStore(store(Stores.MEMORY_ENTITIES, Stores.ENTITY));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_PASSAGES, Stores.MENTION));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_INDEX, Stores.TEXT));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_PAIRS, Stores.PAIR));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_MEMBERS, Stores.TEXT));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_VECTORS, Stores.VECTOR));
        builder.addStateStore(store(Stores.MEMORY_ENTITY_OVERRIDES, Stores.PAIR));
        builder.addStateStore(store(Stores.MEMORY_PASSAGE_ENTITIES, Stores.TEXT));
        builder.addStateStore(store(Stores.MEMORY_GISTS, Stores.GIST));
        builder.addStateStore(store(Stores.MEMORY_THEMES, Stores.THEMES));
        builder.addStateStore(store(Stores.MEMORY_NAMESPACES, Stores.NAMESPACE));
        // Operators' commands join the understandings (same key, same partition count): one writer per namespace.
        KStream<String, UnderstandingEvent> commands = builder.stream(
                        topics.memoryCommands(),
                        Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("memory-commands-source"))
                .mapValues(
                        bytes -> (UnderstandingEvent) UnderstandingEvent.Command.decode(bytes),
                        Named.as("memory-commands-decode"));
        KStream<Void, Emission> constructed = builder.stream(
                        topics.understandings(),
                        Consumed.with(Serdes.String(), UNDERSTANDING_SERDE).withName("understandings-source"))
                .merge(commands, Named.as("memory-inputs"))
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
                        Stores.MEMORY_ENTITY_INDEX,
                        Stores.MEMORY_ENTITY_PAIRS,
                        Stores.MEMORY_ENTITY_MEMBERS,
                        Stores.MEMORY_ENTITY_VECTORS,
                        Stores.MEMORY_ENTITY_OVERRIDES,
                        Stores.MEMORY_PASSAGE_ENTITIES,
                        Stores.MEMORY_GISTS,
                        Stores.MEMORY_THEMES,
                        Stores.MEMORY_NAMESPACES);
        route(constructed, "construct", topics);
    }

    /** Sends each emission of a step to its topic, keyed as that topic's schema says. */
    private static void route(KStream<Void, Emission> emissions, String step, Topics topics) {
        BranchedKStream<Void, Emission> split = emissions.split(Named.as(step + "-"));
        sink(
                split,
                step,
                "passages",
                Emission.Passage.class,
                e -> KeyValue.pair(e.event().passageId(), e.event()),
                topics.passages(),
                Serdes.String(),
                PASSAGE_SERDE);
        sink(
                split,
                step,
                "understandings",
                Emission.Understood.class,
                e -> KeyValue.pair(e.event().namespace(), e.event()),
                topics.understandings(),
                Serdes.String(),
                UNDERSTANDING_SERDE);
        sink(
                split,
                step,
                "extractions",
                Emission.Extracted.class,
                e -> KeyValue.pair(e.cacheKey(), e.extraction()),
                topics.extractions(),
                Serdes.String(),
                Stores.EXTRACTION);
        sink(
                split,
                step,
                "changes",
                Emission.Change.class,
                e -> KeyValue.pair(e.change().namespace(), e.change()),
                topics.memoryChanges(),
                Serdes.String(),
                MEMORY_CHANGE_SERDE);
        sink(
                split,
                step,
                "dead-letters",
                Emission.Dead.class,
                e -> KeyValue.pair(e.key(), e.letter()),
                topics.deadLetters(),
                Serdes.ByteArray(),
                DEAD_LETTER_SERDE);
    }

    /** One branch of a step's output: the emissions of one kind, keyed and written to their topic. */
    private static <E extends Emission, K, V> void sink(
            BranchedKStream<Void, Emission> split,
            String step,
            String name,
            Class<E> kind,
            Function<E, KeyValue<K, V>> keyed,
            String topic,
            Serde<K> keySerde,
            Serde<V> valueSerde) {
        split.branch(
                (k, v) -> kind.isInstance(v),
                Branched.<Void, Emission>withConsumer(s -> s.map(
                                        (k, v) -> keyed.apply(kind.cast(v)), Named.as(step + "-" + name + "-key"))
                                .to(topic, Produced.with(keySerde, valueSerde).withName(step + "-" + name + "-sink")))
                        .withName(name));
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
