package dev.engram.service.app;

import dev.engram.metrics.Meters;
import dev.engram.processors.UnderstandingWorkers;
import dev.engram.query.GraphLoader;
import dev.engram.query.LlmQueries;
import dev.engram.query.NamespaceLocator;
import dev.engram.query.QueryService;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.PassageEvent;
import dev.engram.service.cluster.AgentMemory;
import dev.engram.service.cluster.MemoryAccess;
import dev.engram.service.cluster.NamespaceDirectory;
import dev.engram.service.cluster.NamespaceRouter;
import dev.engram.service.http.ApiException;
import dev.engram.service.http.ApiKeys;
import dev.engram.service.http.HttpApi;
import dev.engram.service.http.Origins;
import dev.engram.service.http.Routes;
import dev.engram.service.mcp.McpEndpoint;
import dev.engram.stores.StateStores;
import dev.engram.topology.EngramTopology;
import dev.engram.topology.Topics;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.RuleExtractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.OpenAiClient;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One Engram instance: topics, the Kafka Streams topology, the HTTP query layer and the metrics. */
public final class EngramService implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EngramService.class);
    /** The largest record the service writes or reads, in bytes. */
    public static final int MAX_RECORD_BYTES = 8 << 20;

    private final EngramConfig config;
    private final Topics topics;
    private final PrometheusMeterRegistry registry;
    /** CONSTRUCT: the memory stores, queried over HTTP. */
    private final KafkaStreams streams;
    /** READ and UNDERSTAND, on their own threads so that expensive understanding never starves the memory. */
    private final KafkaStreams ingest;

    private final HttpApi http;
    /** Health checks and metrics on a port of their own, or null (ENGRAM_HTTP_MANAGEMENT_PORT). */
    private final HttpApi management;

    private final StreamHealth health;
    private final GraphLoader graphs;
    private final Understander understander;
    private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
    private final List<KafkaStreamsMetrics> streamsMetrics = new CopyOnWriteArrayList<>();

    private final boolean ownsUnderstander;
    private final UnderstandingWorkers workers;
    private final KafkaProducer<String, MemoryCommand> commandProducer;
    private final KafkaProducer<byte[], byte[]> documentProducer;
    /** What the read step has committed of the documents topic, for writers waiting on their documents. */
    private final ReadProgress readProgress;

    private final MirrorClients mirrors;
    /** What the agent construction reads of memory. */
    private final AgentMemory agentMemory;

    private EngramService(EngramConfig config, Understander given) throws IOException {
        this.config = config;
        this.topics = new Topics(config.kafka().topicPrefix());
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        gcMetrics.bindTo(registry);
        Meters meters = new Meters(registry);
        this.ownsUnderstander = given == null;
        // One client, and so one concurrency limit, for every LLM call of the process.
        OpenAiClient llm = config.understanding().llm() == null
                ? null
                : new OpenAiClient(config.understanding().llm(), meters::llmCall);
        this.agentMemory = new AgentMemory();
        this.understander = given == null ? UnderstanderFactory.create(config, llm, agentMemory, meters) : given;
        if (understander instanceof PassageUnderstander passages) {
            meters.embeddingTexts(passages, PassageUnderstander::embedded, PassageUnderstander::reused);
        }
        // A remote model is called by workers, never on a stream thread inside a transaction.
        this.workers = understander.remote()
                ? new UnderstandingWorkers(understander, config.understanding().workers(), meters)
                : null;

        KafkaSetup.createTopics(config, topics);
        EngramTopology.Settings steps = EngramTopology.Settings.of(
                        topics,
                        config.ingest().maxDocumentBytes(),
                        config.ingest().chunkMaxTokens())
                .withRepairInterval(config.mirrors().repairInterval())
                .withCacheScope(config.understanding().cacheScope())
                .withMergeModel(config.understanding().mergeModel());
        Topology memory = EngramTopology.build(steps.withPart(EngramTopology.Part.MEMORY), understander, meters);
        Topology ingesting =
                EngramTopology.build(steps.withPart(EngramTopology.Part.INGEST), understander, workers, meters);
        LOG.debug("memory topology:\n{}\ningest topology:\n{}", memory.describe(), ingesting.describe());
        StreamHealth.App memoryApp = new StreamHealth.App();
        StreamHealth.App ingestApp = new StreamHealth.App();
        this.health = new StreamHealth(
                ingestApp,
                memoryApp,
                Clock.systemUTC(),
                config.http().applicationServer(),
                understander.extractor().id(),
                understander.embedder().modelId());
        this.streams = streams(
                "memory",
                memory,
                KafkaSetup.streamsProperties(
                        config, config.kafka().applicationId(), config.kafka().memoryThreads(), topics, meters),
                memoryApp);
        this.ingest = streams(
                "ingest",
                ingesting,
                KafkaSetup.streamsProperties(
                        config,
                        config.kafka().applicationId() + "-ingest",
                        config.kafka().ingestThreads(),
                        topics,
                        meters),
                ingestApp);
        HostInfo self =
                new HostInfo(config.http().advertisedHost(), config.http().advertisedPort());
        NamespaceLocator locator = new NamespaceLocator(streams);
        this.graphs = new GraphLoader(
                GraphLoader.Settings.of(
                                config.query().snapshotMaxStalenessMs(),
                                config.query().snapshotBackgroundMs())
                        .withIndexDir(config.storage().stateDir().resolve("vector-index"))
                        .withBudget(
                                config.query().snapshotMemoryBytes(),
                                config.query().snapshotIdle())
                        .withEmbedder(understander.embedder().modelId())
                        .withBuildShare(config.query().snapshotBuildShare())
                        .withRecentPassages(config.query().snapshotRecentPassages()),
                config.query().vectorSearch(),
                meters);
        streams.setGlobalStateRestoreListener(new MemoryRestores(partition -> graphs.forgetKept(ns -> {
            int p = locator.partitionOf(ns);
            return p < 0 || p == partition; // not known (a rebalance): forgotten too
        })));
        Map<String, Object> producer = config.kafka().clientConfig();
        producer.put(ProducerConfig.ACKS_CONFIG, "all");
        producer.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        producer.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        producer.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        this.commandProducer = new KafkaProducer<>(
                producer,
                new StringSerializer(),
                topics.memoryCommands().valueSerde().serializer());
        Map<String, Object> documentsConfig = new HashMap<>(producer);
        documentsConfig.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_RECORD_BYTES);
        documentsConfig.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        this.documentProducer =
                new KafkaProducer<>(documentsConfig, new ByteArraySerializer(), new ByteArraySerializer());
        this.readProgress = new ReadProgress(
                Admin.create(config.kafka().clientConfig()), config.kafka().applicationId() + "-ingest");
        this.mirrors =
                MirrorClients.open(config, topics, meters, config.mirrors().runSink());
        Consistency consistency = new Consistency(
                QueryService.memoryOf(locator),
                mirrors == null ? null : mirrors.graph,
                mirrors == null ? null : mirrors.vectors,
                mirrors == null ? null : mirrors.producer,
                topics.compensations().name(),
                meters,
                Clock.systemUTC(),
                mirrors == null
                        ? null
                        : new SinkPosition(
                                readProgress.admin(),
                                config.kafka().clientConfig(),
                                topics.mirror().name(),
                                MirrorClients.group(config),
                                locator::partitionOf,
                                Duration.ofSeconds(5)));
        QueryService queries = new QueryService(
                QueryService.memoryOf(locator),
                understander.embedder(),
                queryEntities(),
                graphs,
                c -> commandProducer
                        .send(new ProducerRecord<>(topics.memoryCommands().name(), c.namespace(), c))
                        .get(15, TimeUnit.SECONDS),
                llm == null ? QueryService.Llm.none() : LlmQueries.over(llm),
                meters,
                Clock.systemUTC());
        NamespaceRouter router = new NamespaceRouter(locator, self);
        Routes routes = new Routes(
                queries,
                health::health,
                () -> {
                    meters.documentsByStatus(documentsByStatus(queries));
                    return registry.scrape();
                },
                consistency,
                new DocumentWriter(
                        documentProducer,
                        topics.documents().name(),
                        config.ingest().maxDocumentBytes(),
                        new Chunker(config.ingest().chunkMaxTokens()),
                        queries::documentRecord,
                        readProgress::committed),
                config.ingest().maxDocumentBytes(),
                new NamespaceDirectory(this::servedNamespaces, this::memoryInstances, self));
        ApiKeys keys =
                config.security().enabled() ? new ApiKeys(config.security().keys()) : null;
        Origins origins = new Origins(
                config.http().advertisedHost(),
                config.http().allowedOrigins(),
                // the name it binds is one of its own
                Stream.concat(
                                config.http().allowedHosts().stream(),
                                Stream.of(config.http().host()))
                        .filter(h -> h != null && !h.isBlank())
                        .toList());
        MemoryAccess access = new MemoryAccess(routes.table(), router);
        agentMemory.bind(
                queries,
                router,
                access,
                config.understanding().agent() == null
                        ? ""
                        : config.understanding().agent().apiKey());
        this.http = new HttpApi(
                new InetSocketAddress(config.http().host(), config.http().port()),
                access,
                Map.of("/mcp", McpEndpoint.servlet(access)),
                keys,
                origins,
                config.http().maxInFlight(),
                config.http().maxInFlightPerNamespace(),
                meters);
        // health checks and metrics on a port of their own too, with connections of their own: clients that hold
        // every connection of the API's port do not make a liveness probe fail
        try {
            this.management = config.http().managementPort() == EngramConfig.Http.NO_MANAGEMENT_PORT
                    ? null
                    : new HttpApi(
                            new InetSocketAddress(
                                    config.http().host(), config.http().managementPort()),
                            routes.management(),
                            router,
                            keys,
                            origins,
                            config.http().maxInFlight(),
                            config.http().maxInFlightPerNamespace(),
                            meters);
        } catch (RuntimeException e) {
            http.close(); // the API's port is not left open by a service that did not start
            throw e;
        }
        ingest.start();
        streams.start();
        if (mirrors != null) {
            mirrors.start();
        }
    }

    private KafkaStreams streams(String name, Topology topology, Properties props, StreamHealth.App app) {
        KafkaStreams s = new KafkaStreams(topology, props);
        app.track(s::state);
        s.setUncaughtExceptionHandler(e -> {
            app.threadFailed(Instant.now());
            LOG.error("{} stream thread failed; replacing it", name, e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        s.setStateListener(new KafkaStreams.StateListener() {
            private boolean bound;

            @Override
            public void onChange(KafkaStreams.State next, KafkaStreams.State previous) {
                LOG.info("{} streams state {} -> {}", name, previous, next);
                if (next == KafkaStreams.State.RUNNING && !bound) {
                    bound = true;
                    KafkaStreamsMetrics m = new KafkaStreamsMetrics(s);
                    m.bindTo(registry);
                    streamsMetrics.add(m);
                }
            }
        });
        return s;
    }

    /**
     * Starts an instance with the understanding its configuration asks for (owned and closed by the service), against
     * {@code config.kafka().bootstrapServers()}. The HTTP port must be fixed (not 0) when other instances route to it.
     */
    public static EngramService start(EngramConfig config) {
        return start(config, null);
    }

    /** Starts an instance with a given understanding, which stays the caller's to close. */
    public static EngramService start(EngramConfig config, Understander understander) {
        try {
            return new EngramService(config, understander);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot start the HTTP server on " + config.http().host() + ":"
                            + config.http().port(),
                    e);
        }
    }

    public Topics topics() {
        return topics;
    }

    public EngramConfig config() {
        return config;
    }

    public KafkaStreams streams() {
        return streams;
    }

    /** The agent construction's view of memory (for tests of reads that cross instances). */
    public AgentMemory agentMemory() {
        return agentMemory;
    }

    public int httpPort() {
        return http.port();
    }

    /** The port of health checks and metrics on a listener of their own, or -1 when there is none. */
    public int managementPort() {
        return management == null ? EngramConfig.Http.NO_MANAGEMENT_PORT : management.port();
    }

    /** Waits until both streams applications are RUNNING; false on timeout or failure. */
    public boolean awaitRunning(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            KafkaStreams.State m = streams.state();
            KafkaStreams.State i = ingest.state();
            if (m == KafkaStreams.State.RUNNING && i == KafkaStreams.State.RUNNING) {
                return true;
            }
            for (KafkaStreams.State s : List.of(m, i)) {
                if (s == KafkaStreams.State.ERROR || s == KafkaStreams.State.NOT_RUNNING) {
                    return false;
                }
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        return false;
    }

    /** Names in a query, read with the embedded extractor (cheap, offline) whatever extractor the passages use. */
    private static Function<String, List<String>> queryEntities() {
        RuleExtractor extractor = new RuleExtractor(new EnglishNlp(), 0);
        return query -> {
            List<String> names = new ArrayList<>();
            var x = extractor.extract(new PassageEvent.Upsert(
                    "query", "query", 1, "", 0, "", "", List.of(), query, 0, query.length(), null, null));
            for (var e : x.entities()) {
                if (e.type() != EntityType.CONCEPT) {
                    names.add(e.name());
                    names.addAll(e.aliases());
                }
            }
            return names;
        };
    }

    /** Documents by status of each namespace this instance owns, for the gauge; a namespace moving away is left out. */
    private Map<String, Map<String, Long>> documentsByStatus(QueryService queries) {
        Map<String, Map<String, Long>> out = new TreeMap<>();
        for (String ns : localNamespaces()) {
            try {
                out.put(ns, queries.namespace(ns).documentsByStatus());
            } catch (RuntimeException e) {
                LOG.debug("no document counts for namespace {} at this scrape: {}", ns, e.toString());
            }
        }
        return out;
    }

    /** Every running instance of the memory step, as its {@code application.server}; empty while starting. */
    private List<HostInfo> memoryInstances() {
        try {
            return streams.metadataForAllStreamsClients().stream()
                    .map(StreamsMetadata::hostInfo)
                    .toList();
        } catch (IllegalStateException e) {
            return List.of();
        }
    }

    /** The namespaces this instance serves now; 503 while it is starting or its partitions move. */
    private List<String> servedNamespaces() {
        if (streams.state() != KafkaStreams.State.RUNNING) {
            throw ApiException.unavailable("instance is " + streams.state() + "; retry shortly");
        }
        try (KeyValueIterator<String, Object> it = streams.store(StoreQueryParameters.fromNameAndType(
                        StateStores.MEMORY_NAMESPACES.name(), QueryableStoreTypes.<String, Object>keyValueStore()))
                .all()) {
            List<String> out = new ArrayList<>();
            it.forEachRemaining(kv -> out.add(kv.key));
            return out;
        } catch (InvalidStateStoreException e) {
            throw ApiException.unavailable("the stores of this instance are not ready; retry shortly");
        }
    }

    /** The namespaces whose memory this instance holds (its partitions of the memory step); empty while starting. */
    private List<String> localNamespaces() {
        try {
            List<String> out = new ArrayList<>(servedNamespaces());
            Collections.sort(out);
            return out;
        } catch (ApiException e) {
            return List.of();
        }
    }

    @Override
    public void close() {
        http.close();
        if (management != null) {
            management.close();
        }
        if (mirrors != null) {
            mirrors.close();
        }
        commandProducer.close(Duration.ofSeconds(5));
        documentProducer.close(Duration.ofSeconds(5));
        readProgress.close();
        // Leave the group on a deliberate shutdown, so the remaining or restarted instances take over at once
        // instead of after the session timeout.
        var leave = CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(30));
        ingest.close(leave);
        if (workers != null) {
            workers.close();
        }
        streams.close(leave);
        graphs.close();
        streamsMetrics.forEach(KafkaStreamsMetrics::close);
        gcMetrics.close();
        registry.close();
        if (ownsUnderstander) {
            understander.close();
        }
    }
}
