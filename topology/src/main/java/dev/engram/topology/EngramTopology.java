package dev.engram.topology;

import dev.engram.metrics.Meters;
import dev.engram.processors.ConstructProcessor;
import dev.engram.processors.Emission;
import dev.engram.processors.ExtractionCacheScope;
import dev.engram.processors.MergeModel;
import dev.engram.processors.ReadProcessor;
import dev.engram.processors.UnderstandProcessor;
import dev.engram.processors.UnderstandingWorkers;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoreSpec;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.Understander;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.BranchedKStream;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Engram topology: READ (documents → passages + manifests), UNDERSTAND (passages → understandings, keyed by
 * namespace), CONSTRUCT (understandings → namespace-owned memory stores + memory changes). Every operator, store and
 * sink is named, so the topology survives upgrades without losing state. Each processor declares its own stores.
 */
public final class EngramTopology {

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

    /**
     * What a topology is built with: its topics, the largest document read ({@code maxDocumentBytes}), the passages'
     * size ({@code chunkMaxTokens}), which steps it holds, how often objects a mirror rejected are re-emitted (with
     * backoff) and within what cached extractions are shared.
     */
    public record Settings(
            Topics topics,
            int maxDocumentBytes,
            int chunkMaxTokens,
            Part part,
            Duration repairInterval,
            ExtractionCacheScope cacheScope,
            MergeModel mergeModel) {

        public Settings {
            Objects.requireNonNull(mergeModel, "mergeModel");
            Objects.requireNonNull(topics, "topics");
            Objects.requireNonNull(part, "part");
            Objects.requireNonNull(repairInterval, "repairInterval");
            Objects.requireNonNull(cacheScope, "cacheScope");
        }

        /** Every step, the default repair interval, extractions shared within a namespace. */
        public static Settings of(Topics topics, int maxDocumentBytes, int chunkMaxTokens) {
            return new Settings(
                    topics,
                    maxDocumentBytes,
                    chunkMaxTokens,
                    Part.ALL,
                    ConstructProcessor.REPAIR_INTERVAL,
                    ExtractionCacheScope.NAMESPACE,
                    MergeModel.shipped());
        }

        public Settings withPart(Part steps) {
            return new Settings(
                    topics, maxDocumentBytes, chunkMaxTokens, steps, repairInterval, cacheScope, mergeModel);
        }

        public Settings withRepairInterval(Duration interval) {
            return new Settings(topics, maxDocumentBytes, chunkMaxTokens, part, interval, cacheScope, mergeModel);
        }

        public Settings withCacheScope(ExtractionCacheScope scope) {
            return new Settings(topics, maxDocumentBytes, chunkMaxTokens, part, repairInterval, scope, mergeModel);
        }

        /** Entity resolution merging by {@code model} ({@link MergeModel#RULES}: by the rules alone). */
        public Settings withMergeModel(MergeModel model) {
            return new Settings(topics, maxDocumentBytes, chunkMaxTokens, part, repairInterval, cacheScope, model);
        }
    }

    /** The topology, understanding passages in process. */
    public static Topology build(Settings settings, Understander understander, Meters meters) {
        return build(settings, understander, null, meters);
    }

    /**
     * The topology with its understanding: {@code workers} for a remote model (the understanding is theirs, and the
     * {@code understander} only names it), or null to understand in process.
     */
    public static Topology build(
            Settings settings, Understander understander, UnderstandingWorkers workers, Meters meters) {
        Topics topics = settings.topics();
        int maxDocumentBytes = settings.maxDocumentBytes();
        int chunkMaxTokens = settings.chunkMaxTokens();
        ExtractionCacheScope cacheScope = settings.cacheScope();
        Part part = settings.part();
        Duration repairInterval = settings.repairInterval();
        StreamsBuilder builder = new StreamsBuilder();
        if (part != Part.MEMORY) {
            buildIngest(builder, topics, maxDocumentBytes, chunkMaxTokens, understander, workers, cacheScope, meters);
        }
        if (part != Part.INGEST) {
            buildMemory(builder, topics, meters, repairInterval, settings.mergeModel());
        }
        return builder.build();
    }

    private static void buildIngest(
            StreamsBuilder builder,
            Topics topics,
            int maxDocumentBytes,
            int chunkMaxTokens,
            Understander understander,
            UnderstandingWorkers workers,
            ExtractionCacheScope cacheScope,
            Meters meters) {
        if (workers != null && workers.understander() != understander) {
            throw new IllegalArgumentException("the workers must run the topology's understanding");
        }
        DocumentDecoder decoder = new DocumentDecoder(maxDocumentBytes);
        Chunker chunker = new Chunker(chunkMaxTokens);
        KStream<Void, Emission> read = builder.stream(
                        topics.documents().name(), topics.documents().consumed("documents-source"))
                .process(ReadProcessor.supplier(decoder, chunker, meters), Named.as("read"));
        route(read, "read", topics);

        String cache = null;
        if (understander.extractor().cacheable()) {
            StoreSpec<Extraction> spec = StateStores.EXTRACTION_CACHE;
            cache = spec.name();
            builder.addGlobalStore(
                    spec.builder().withLoggingDisabled(),
                    topics.extractions().name(),
                    // read as bytes: the loader checks each record itself (the global thread cannot dead-letter)
                    Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("extractions-source"),
                    () -> new CacheLoader(spec.name(), meters));
        }
        String cacheStore = cache;
        KStream<String, PassageEvent> passages =
                builder.stream(topics.passages().name(), topics.passages().consumed("passages-source"));
        KStream<Void, Emission> understood = workers == null
                ? passages.process(
                        UnderstandProcessor.supplier(understander, cacheStore, cacheScope, meters),
                        Named.as("understand"))
                : passages.process(
                        UnderstandProcessor.deferred(workers, cacheStore, cacheScope, meters), Named.as("understand"));
        route(understood, "understand", topics);
    }

    private static void buildMemory(
            StreamsBuilder builder, Topics topics, Meters meters, Duration repairInterval, MergeModel mergeModel) {
        // Operators' commands join the understandings (same key, same partition count): one writer per namespace.
        KStream<String, UnderstandingEvent> commands = builder.stream(
                        topics.memoryCommands().name(),
                        // raw bytes: a malformed command is dead-lettered by the memory step, never a poison pill
                        Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("memory-commands-source"))
                .mapValues(
                        bytes -> (UnderstandingEvent) UnderstandingEvent.Command.decode(bytes),
                        Named.as("memory-commands-decode"));
        // The mirrors' reports (compensated, repaired, drifted objects), raw for the same reason.
        KStream<String, UnderstandingEvent> feedback = builder.stream(
                        topics.compensations().name(),
                        Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("compensations-source"))
                .mapValues(
                        bytes -> (UnderstandingEvent) UnderstandingEvent.MirrorFeedback.decode(bytes),
                        Named.as("compensations-decode"));
        KStream<Void, Emission> constructed = builder.stream(
                        topics.understandings().name(), topics.understandings().consumed("understandings-source"))
                .merge(commands, Named.as("memory-inputs"))
                .merge(feedback, Named.as("memory-feedback"))
                .process(ConstructProcessor.supplier(meters, repairInterval, mergeModel), Named.as("construct"));
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
                topics.passages());
        sink(
                split,
                step,
                "understandings",
                Emission.Understood.class,
                e -> KeyValue.pair(e.event().namespace(), e.event()),
                topics.understandings());
        sink(
                split,
                step,
                "extractions",
                Emission.Extracted.class,
                e -> KeyValue.pair(e.cacheKey(), e.extraction()),
                topics.extractions());
        sink(
                split,
                step,
                "changes",
                Emission.Change.class,
                e -> KeyValue.pair(e.change().namespace(), e.change()),
                topics.memoryChanges());
        sink(
                split,
                step,
                "mirror",
                Emission.Mirrored.class,
                e -> KeyValue.pair(e.record().namespace(), e.record()),
                topics.mirror());
        sink(
                split,
                step,
                "dead-letters",
                Emission.Dead.class,
                e -> KeyValue.pair(e.key(), e.letter()),
                topics.deadLetters());
    }

    /** One branch of a step's output: the emissions of one kind, keyed and written to their topic. */
    private static <E extends Emission, K, V> void sink(
            BranchedKStream<Void, Emission> split,
            String step,
            String name,
            Class<E> kind,
            Function<E, KeyValue<K, V>> keyed,
            Topic<K, V> topic) {
        split.branch(
                (k, v) -> kind.isInstance(v),
                Branched.<Void, Emission>withConsumer(
                                s -> s.map((k, v) -> keyed.apply(kind.cast(v)), Named.as(step + "-" + name + "-key"))
                                        .to(topic.name(), topic.produced(step + "-" + name + "-sink")))
                        .withName(name));
    }

    /**
     * Keeps the global extraction cache in step with the extractions topic (a null value deletes). A record that is no
     * extraction (not JSON, or JSON its schema refuses) is never taken for one: its key is forgotten, so that the
     * passage is extracted again, and it is logged and counted ({@code engram_extraction_cache_total{result="invalid"}}).
     * The global thread has no producer to dead-letter it with, and the cache loses nothing by it.
     */
    static final class CacheLoader implements Processor<String, byte[], Void, Void> {
        private static final Logger LOG = LoggerFactory.getLogger(CacheLoader.class);
        private final String storeName;
        private final Meters meters;
        private KeyValueStore<String, Extraction> store;

        CacheLoader(String storeName, Meters meters) {
            this.storeName = storeName;
            this.meters = meters;
        }

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore(storeName);
        }

        @Override
        public void process(Record<String, byte[]> record) {
            if (record.key() == null) {
                return; // nothing to key it by: the cache holds nothing for it
            }
            if (record.value() == null) {
                store.delete(record.key());
                return;
            }
            Extraction.Checked checked = Extraction.check(record.value());
            if (checked.extraction() != null) {
                store.put(record.key(), checked.extraction());
                return;
            }
            store.delete(record.key());
            meters.extractionCacheInvalid();
            LOG.warn(
                    "extraction cache record with key {} is no extraction, skipped: {}",
                    record.key(),
                    checked.problem());
        }
    }
}
