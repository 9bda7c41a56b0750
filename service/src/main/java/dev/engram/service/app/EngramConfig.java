package dev.engram.service.app;

import dev.engram.processors.ExtractionCacheScope;
import dev.engram.processors.UnderstandingWorkers;
import dev.engram.query.VectorSearch;
import dev.engram.retrieval.EngramHnswFormat;
import dev.engram.service.http.ApiKeys;
import dev.engram.service.http.Origins;
import dev.engram.service.http.RequestSlots;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.QdrantMirror;
import dev.engram.understanding.LocalModel;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.llm.LlmConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * The service configuration, read from {@code ENGRAM_*} environment variables (every one is documented in the
 * README with its default). Each variable is named once, where it is read, and checked there, so a bad setting fails
 * at start with a message naming it.
 */
public record EngramConfig(
        Kafka kafka,
        Http http,
        Storage storage,
        Ingest ingest,
        Understanding understanding,
        Query query,
        Security security,
        Mirrors mirrors) {

    public EngramConfig {
        Objects.requireNonNull(mirrors, "mirrors");
        Objects.requireNonNull(kafka, "kafka");
        Objects.requireNonNull(http, "http");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(ingest, "ingest");
        Objects.requireNonNull(understanding, "understanding");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(security, "security");
    }

    /**
     * Who may call the HTTP API: with {@code enabled}, every request but the health checks needs one of the keys, and
     * a key reaches only its namespaces with its role. Off only when explicitly disabled.
     */
    public record Security(boolean enabled, List<ApiKeys.Key> keys) {
        public Security {
            keys = keys == null ? List.of() : List.copyOf(keys);
            if (enabled && keys.isEmpty()) {
                throw new IllegalArgumentException("authentication needs at least one key");
            }
        }

        static Security disabled() {
            return new Security(false, List.of());
        }
    }

    /**
     * Where Kafka is and how Engram uses it: the embedded broker or {@code bootstrapServers}, the application id of the
     * memory application (the ingest application adds {@code -ingest}), topic names and sizes, stream threads, and the
     * instance's stable identity ({@code instanceId}, null for none): with one, both applications are static members
     * of their groups, so a restarted instance takes its partitions back at once instead of after the session timeout.
     */
    public record Kafka(
            boolean embedded,
            String bootstrapServers,
            int embeddedPort,
            String applicationId,
            String topicPrefix,
            int partitions,
            short replicationFactor,
            int ingestThreads,
            int memoryThreads,
            long commitIntervalMs,
            int standbyReplicas,
            String instanceId,
            Map<String, String> clientProperties) {

        /** Settings Engram's guarantees rest on: not overridable through {@code ENGRAM_KAFKA_*}. */
        static final Set<String> RESERVED = Set.of(
                "bootstrap.servers",
                "application.id",
                "application.server",
                "state.dir",
                "processing.guarantee",
                "num.stream.threads",
                "num.standby.replicas",
                "deserialization.exception.handler",
                "default.deserialization.exception.handler",
                "processing.exception.handler",
                "processing.exception.handler.global.enabled",
                "production.exception.handler",
                "default.production.exception.handler",
                "enable.idempotence",
                "transactional.id",
                "isolation.level",
                "key.serializer",
                "value.serializer",
                "key.deserializer",
                "value.deserializer");

        public Kafka {
            if (!embedded && (bootstrapServers == null || bootstrapServers.isBlank())) {
                throw new IllegalArgumentException("bootstrap servers are required without the embedded broker");
            }
            clientProperties = clientProperties == null ? Map.of() : Map.copyOf(clientProperties);
        }

        /**
         * The configuration every Kafka client of Engram starts from (admin, producers, consumers, Streams): the
         * bootstrap servers and the {@code ENGRAM_KAFKA_*} pass-through settings (security, TLS, SASL, tuning).
         */
        public Map<String, Object> clientConfig() {
            Map<String, Object> out = new LinkedHashMap<>(clientProperties);
            out.put("bootstrap.servers", bootstrapServers);
            return out;
        }

        @Override
        public String toString() {
            Map<String, String> shown = new TreeMap<>();
            clientProperties.forEach((k, v) -> shown.put(k, secret(k) ? "***" : v));
            return "Kafka[embedded=" + embedded + ", bootstrapServers=" + bootstrapServers + ", applicationId="
                    + applicationId + ", topicPrefix=" + topicPrefix + ", partitions=" + partitions
                    + ", clientProperties=" + shown + "]";
        }

        private static boolean secret(String key) {
            String k = key.toLowerCase(Locale.ROOT);
            return k.contains("password") || k.contains("jaas") || k.contains("secret") || k.contains("key");
        }

        public Kafka withBootstrapServers(String servers) {
            return new Kafka(
                    false,
                    servers,
                    embeddedPort,
                    applicationId,
                    topicPrefix,
                    partitions,
                    replicationFactor,
                    ingestThreads,
                    memoryThreads,
                    commitIntervalMs,
                    standbyReplicas,
                    instanceId,
                    clientProperties);
        }
    }

    /** The comma-separated entries of a setting, blanks left out, each checked; a bad one names the setting. */
    private static List<String> checkedList(String value, String name, UnaryOperator<String> check) {
        return Arrays.stream(value.split(","))
                .map(String::strip)
                .filter(v -> !v.isEmpty())
                .map(v -> {
                    try {
                        return check.apply(v);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(name + ": " + e.getMessage());
                    }
                })
                .toList();
    }

    /** Where the HTTP API listens, and the address other instances reach it at (Kafka Streams application.server). */
    public record Http(
            String host,
            int port,
            String advertisedHost,
            int advertisedPort,
            int maxInFlight,
            int maxInFlightPerNamespace,
            List<String> allowedOrigins,
            List<String> allowedHosts,
            int managementPort) {

        /** No listener of its own for health checks and metrics: they are served on the API's port only. */
        public static final int NO_MANAGEMENT_PORT = -1;

        public Http {
            allowedOrigins = List.copyOf(allowedOrigins);
            allowedHosts = List.copyOf(allowedHosts);
        }

        /** {@code host:port} as other instances reach this one. */
        public String applicationServer() {
            return advertisedHost + ":" + advertisedPort;
        }

        public URI advertisedUri() {
            return URI.create("http://" + applicationServer());
        }
    }

    /** Where state lives on disk and how much memory RocksDB may use. */
    public record Storage(Path stateDir, long rocksDbMemoryBytes) {}

    /** Limits of the read step. */
    public record Ingest(int maxDocumentBytes, int chunkMaxTokens) {}

    /**
     * Which understanding runs and how; {@code embedder} is the local model (of the embedded understanding, and of an
     * LLM understanding without an embeddings API); {@code embedReuseTexts} entity and fact texts keep their vectors for reuse;
     * {@code llm} is set whenever an LLM is configured; {@code workers} bound the
     * passages a remote model understands at once and how long one waits through an outage; {@code cacheScope} says
     * which passages share a cached extraction.
     */
    public record Understanding(
            Kind kind,
            LocalModel embedder,
            int embedMaxTokens,
            int embedThreads,
            int embedReuseTexts,
            int questionsPerPassage,
            LlmConfig llm,
            UnderstandingWorkers.Settings workers,
            ExtractionCacheScope cacheScope,
            Agent agent) {

        /** The extractor of passages. */
        public enum Kind {
            /** Offline rules and the local ONNX embedder. */
            EMBEDDED,
            /** An OpenAI-compatible chat API. */
            LLM
        }

        public Understanding {
            if (kind == Kind.LLM && llm == null) {
                throw new IllegalArgumentException("llm understanding needs an LLM");
            }
            if (agent != null && llm == null) {
                throw new IllegalArgumentException("the agent construction needs an LLM");
            }
        }
    }

    /**
     * The agent construction ({@code ENGRAM_CONSTRUCTION=agent}): its rounds and token budgets, its concurrency per
     * namespace, the namespaces it constructs (empty: every one), and the API key it presents to the instance that owns
     * a namespace when it reads that namespace's memory there (needed only with API keys and several instances).
     */
    public record Agent(
            int maxRounds,
            long tokensPerPassage,
            long tokensPerHour,
            int concurrencyPerNamespace,
            int transientAttempts,
            Set<String> namespaces,
            String apiKey) {
        public Agent {
            namespaces = Set.copyOf(namespaces);
            apiKey = apiKey == null ? "" : apiKey;
        }

        /** Whether the agent constructs this namespace. */
        public boolean constructs(String namespace) {
            return namespaces.isEmpty() || namespaces.contains(namespace);
        }

        @Override
        public String toString() {
            return "Agent[maxRounds=" + maxRounds + ", tokensPerPassage=" + tokensPerPassage + ", tokensPerHour="
                    + tokensPerHour + ", concurrencyPerNamespace=" + concurrencyPerNamespace + ", transientAttempts="
                    + transientAttempts + ", namespaces="
                    + namespaces + ", apiKey=" + (apiKey.isEmpty() ? "" : "***") + "]";
        }
    }

    /**
     * The mirrors of memory: Neo4j ({@code neo4j}, null when off) and Qdrant ({@code qdrant}, null when off), how the
     * sink writes to them, and whether the service runs the sink itself ({@code runSink}) or leaves it to
     * {@code engram sink} processes.
     */
    public record Mirrors(
            Neo4jMirror.Settings neo4j,
            QdrantMirror.Settings qdrant,
            int batchSize,
            int retries,
            Duration backoff,
            Duration pause,
            Duration repairInterval,
            boolean runSink) {

        public static final Mirrors NONE = new Mirrors(
                null, null, 500, 5, Duration.ofMillis(200), Duration.ofSeconds(30), Duration.ofMinutes(1), true);

        public boolean enabled() {
            return neo4j != null || qdrant != null;
        }

        public Mirrors withNeo4j(Neo4jMirror.Settings settings) {
            return new Mirrors(settings, qdrant, batchSize, retries, backoff, pause, repairInterval, runSink);
        }

        public Mirrors withQdrant(QdrantMirror.Settings settings) {
            return new Mirrors(neo4j, settings, batchSize, retries, backoff, pause, repairInterval, runSink);
        }
    }

    /** The read side: vector search and query snapshots. */
    public record Query(
            VectorSearch vectorSearch,
            long snapshotMaxStalenessMs,
            long snapshotBackgroundMs,
            long snapshotMemoryBytes,
            Duration snapshotIdle,
            double snapshotBuildShare) {}

    /** Reads the configuration from the process environment. */
    public static EngramConfig fromEnvironment() {
        return from(System.getenv());
    }

    /**
     * The configuration of a service that only this machine reaches (the demo, evaluation and benchmarks): the HTTP
     * API bound to 127.0.0.1, without authentication; everything else as the variables say.
     */
    public static EngramConfig local(Map<String, String> variables) {
        Map<String, String> env = new HashMap<>(variables);
        env.put("ENGRAM_HTTP_HOST", "127.0.0.1");
        env.put("ENGRAM_AUTH", "disabled");
        return from(env);
    }

    /** Reads the configuration from a map of {@code ENGRAM_*} variables; unset ones take their defaults. */
    public static EngramConfig from(Map<String, String> variables) {
        Env env = new Env(variables);
        String bootstrap = env.string("ENGRAM_BOOTSTRAP_SERVERS", null);
        boolean embedded = env.bool("ENGRAM_EMBEDDED_KAFKA", bootstrap == null);
        if (!embedded && bootstrap == null) {
            throw invalid("ENGRAM_BOOTSTRAP_SERVERS", "must be set when ENGRAM_EMBEDDED_KAFKA=false");
        }
        Kafka kafka = new Kafka(
                embedded,
                embedded ? null : bootstrap,
                env.integer("ENGRAM_EMBEDDED_KAFKA_PORT", 9092, 0, 65535),
                env.name("ENGRAM_APPLICATION_ID", "engram", "[A-Za-z0-9._-]+"),
                env.name("ENGRAM_TOPIC_PREFIX", "engram.", "[A-Za-z0-9._-]*"),
                env.integer("ENGRAM_PARTITIONS", 4, 1, 10_000),
                (short) env.integer("ENGRAM_REPLICATION_FACTOR", 1, 1, Short.MAX_VALUE),
                env.integer("ENGRAM_STREAM_THREADS", 2, 1, 64),
                env.integer("ENGRAM_MEMORY_THREADS", 1, 1, 64),
                env.integer("ENGRAM_COMMIT_INTERVAL_MS", 200, 10, Integer.MAX_VALUE),
                env.integer("ENGRAM_STANDBY_REPLICAS", 0, 0, 8),
                // the embedded broker serves one instance only: it is always the same member
                env.name("ENGRAM_INSTANCE_ID", embedded ? "embedded" : null, "[A-Za-z0-9._-]+"),
                env.kafkaClientProperties());
        int port = env.integer("ENGRAM_HTTP_PORT", 8080, 0, 65535);
        int maxInFlight = env.integer("ENGRAM_HTTP_MAX_IN_FLIGHT", 256, 1, 100_000);
        Http http = new Http(
                env.string("ENGRAM_HTTP_HOST", "0.0.0.0"),
                port,
                env.string("ENGRAM_ADVERTISED_HOST", "localhost"),
                env.integer("ENGRAM_ADVERTISED_PORT", port, 0, 65535),
                maxInFlight,
                env.integer(
                        "ENGRAM_HTTP_MAX_IN_FLIGHT_PER_NAMESPACE",
                        RequestSlots.defaultShare(maxInFlight),
                        1,
                        maxInFlight),
                checkedList(
                        env.string("ENGRAM_HTTP_ALLOWED_ORIGINS", ""), "ENGRAM_HTTP_ALLOWED_ORIGINS", Origins::checked),
                checkedList(
                        env.string("ENGRAM_HTTP_ALLOWED_HOSTS", ""), "ENGRAM_HTTP_ALLOWED_HOSTS", Origins::checkedHost),
                env.integer("ENGRAM_HTTP_MANAGEMENT_PORT", Http.NO_MANAGEMENT_PORT, 0, 65535));
        Storage storage = new Storage(
                Path.of(env.string("ENGRAM_STATE_DIR", ".engram/state")),
                env.integer("ENGRAM_ROCKSDB_MEMORY_MB", 128, 8, 1 << 20) * (1L << 20));
        Ingest ingest = new Ingest(
                env.integer("ENGRAM_MAX_DOCUMENT_BYTES", 1 << 20, 1024, Integer.MAX_VALUE),
                env.integer("ENGRAM_CHUNK_MAX_TOKENS", 200, 16, 4096));
        Understanding.Kind kind =
                switch (env.string("ENGRAM_UNDERSTANDING", "embedded")) {
                    case "embedded" -> Understanding.Kind.EMBEDDED;
                    case "llm" -> Understanding.Kind.LLM;
                    default -> throw invalid("ENGRAM_UNDERSTANDING", "must be 'embedded' or 'llm'");
                };
        LlmConfig llm = llm(env);
        if (kind == Understanding.Kind.LLM && llm == null) {
            throw invalid("ENGRAM_LLM_BASE_URL", "must be set for llm understanding");
        }
        Agent agent =
                switch (env.string("ENGRAM_CONSTRUCTION", "deterministic")) {
                    case "deterministic" -> null;
                    case "agent" ->
                        new Agent(
                                env.integer("ENGRAM_AGENT_MAX_ROUNDS", 12, 1, 100),
                                env.integer("ENGRAM_AGENT_TOKENS_PER_PASSAGE", 60_000, 1, Integer.MAX_VALUE),
                                env.integer("ENGRAM_AGENT_TOKENS_PER_HOUR", 2_000_000, 1, Integer.MAX_VALUE),
                                env.integer("ENGRAM_AGENT_CONCURRENCY", 2, 1, 256),
                                env.integer("ENGRAM_AGENT_TRANSIENT_ATTEMPTS", 5, 0, 1000),
                                agentNamespaces(env.string("ENGRAM_AGENT_NAMESPACES", "")),
                                env.string("ENGRAM_AGENT_API_KEY", ""));
                    default -> throw invalid("ENGRAM_CONSTRUCTION", "must be 'deterministic' or 'agent'");
                };
        if (agent != null && llm == null) {
            throw invalid("ENGRAM_LLM_BASE_URL", "must be set for the agent construction (ENGRAM_CONSTRUCTION=agent)");
        }
        Understanding understanding = new Understanding(
                kind,
                embedder(env),
                env.integer("ENGRAM_EMBED_MAX_TOKENS", 256, 16, 512),
                env.integer("ENGRAM_EMBED_THREADS", 1, 1, 64),
                env.integer("ENGRAM_EMBED_REUSE_TEXTS", PassageUnderstander.SEEN_TEXTS, 0, 10_000_000),
                env.integer("ENGRAM_QUESTIONS_PER_PASSAGE", 3, 0, 20),
                llm,
                workers(env),
                switch (env.string("ENGRAM_EXTRACTION_CACHE_SCOPE", "namespace")) {
                    case "namespace" -> ExtractionCacheScope.NAMESPACE;
                    case "global" -> ExtractionCacheScope.GLOBAL;
                    default -> throw invalid("ENGRAM_EXTRACTION_CACHE_SCOPE", "must be 'namespace' or 'global'");
                },
                agent);
        Query query = new Query(
                new VectorSearch(
                        env.integer("ENGRAM_ANN_MIN_VECTORS", 20_000, 1, Integer.MAX_VALUE),
                        env.integer("ENGRAM_ANN_EF", 100, 1, 10_000),
                        env.integer("ENGRAM_ANN_M", EngramHnswFormat.DEFAULT_MAX_CONN, 2, 512),
                        env.integer("ENGRAM_ANN_BEAM_WIDTH", EngramHnswFormat.DEFAULT_BEAM_WIDTH, 8, 3200),
                        env.bool("ENGRAM_ANN_BACKGROUND_WRITES", true)),
                env.integer("ENGRAM_SNAPSHOT_MAX_STALENESS_MS", 1000, 0, 3_600_000),
                env.integer("ENGRAM_SNAPSHOT_BACKGROUND_MS", 50, 0, Integer.MAX_VALUE),
                env.integer("ENGRAM_SNAPSHOT_MEMORY_MB", 1024, 16, 1 << 20) * (1L << 20),
                Duration.ofMinutes(env.integer("ENGRAM_SNAPSHOT_IDLE_MINUTES", 30, 1, 525_600)),
                env.integer("ENGRAM_SNAPSHOT_BUILD_PERCENT", 25, 1, 100) / 100.0);
        return new EngramConfig(kafka, http, storage, ingest, understanding, query, security(env), mirrors(env));
    }

    private static LocalModel embedder(Env env) {
        String id = env.string("ENGRAM_EMBEDDER", LocalModel.BGE_SMALL_EN_V15_Q.id());
        try {
            return LocalModel.byId(id);
        } catch (IllegalArgumentException e) {
            throw invalid("ENGRAM_EMBEDDER", "must be one of " + LocalModel.ids());
        }
    }

    private static Mirrors mirrors(Env env) {
        Duration timeout = Duration.ofMillis(env.integer("ENGRAM_SINK_TIMEOUT_MS", 10_000, 100, Integer.MAX_VALUE));
        Neo4jMirror.Settings neo4j = null;
        String uri = env.string("ENGRAM_NEO4J_URI", null);
        if (uri != null) {
            if (!uri.matches("(bolt|neo4j)(\\+s|\\+ssc)?://.+")) {
                throw invalid("ENGRAM_NEO4J_URI", "must be a bolt:// or neo4j:// URI");
            }
            neo4j = new Neo4jMirror.Settings(
                    uri,
                    env.string("ENGRAM_NEO4J_USER", "neo4j"),
                    env.string("ENGRAM_NEO4J_PASSWORD", ""),
                    env.string("ENGRAM_NEO4J_DATABASE", ""),
                    timeout);
        }
        QdrantMirror.Settings qdrant = null;
        String url = env.string("ENGRAM_QDRANT_URL", null);
        if (url != null) {
            URI parsed;
            try {
                parsed = URI.create(url.contains("://") ? url : "http://" + url);
            } catch (IllegalArgumentException e) {
                throw invalid("ENGRAM_QDRANT_URL", "is not a URL");
            }
            if (parsed.getHost() == null) {
                throw invalid("ENGRAM_QDRANT_URL", "must name a host, e.g. http://localhost:6334");
            }
            qdrant = new QdrantMirror.Settings(
                    parsed.getHost(),
                    parsed.getPort() < 0 ? 6334 : parsed.getPort(),
                    "https".equals(parsed.getScheme()),
                    env.string("ENGRAM_QDRANT_API_KEY", null),
                    env.name("ENGRAM_QDRANT_COLLECTION_PREFIX", "engram_", "[A-Za-z0-9._-]*"),
                    timeout);
        }
        return new Mirrors(
                neo4j,
                qdrant,
                env.integer("ENGRAM_SINK_BATCH_SIZE", 500, 1, 100_000),
                env.integer("ENGRAM_SINK_RETRIES", 5, 0, 100),
                Duration.ofMillis(env.integer("ENGRAM_SINK_BACKOFF_MS", 200, 1, Integer.MAX_VALUE)),
                Duration.ofMillis(env.integer("ENGRAM_SINK_PAUSE_MS", 30_000, 1, Integer.MAX_VALUE)),
                Duration.ofMillis(env.integer("ENGRAM_MIRROR_REPAIR_INTERVAL_MS", 60_000, 100, Integer.MAX_VALUE)),
                env.bool("ENGRAM_MIRROR_SINK", true));
    }

    public EngramConfig withMirrors(Mirrors newMirrors) {
        return new EngramConfig(kafka, http, storage, ingest, understanding, query, security, newMirrors);
    }

    private static Security security(Env env) {
        boolean enabled =
                switch (env.string("ENGRAM_AUTH", "required")) {
                    case "required" -> true;
                    case "disabled" -> false;
                    default -> throw invalid("ENGRAM_AUTH", "must be 'required' or 'disabled'");
                };
        List<ApiKeys.Key> keys = new ArrayList<>();
        String inline = env.string("ENGRAM_API_KEYS", null);
        if (inline != null) {
            try {
                keys.addAll(ApiKeys.parseInline(inline));
            } catch (IllegalArgumentException e) {
                throw invalid("ENGRAM_API_KEYS", e.getMessage());
            }
        }
        String file = env.string("ENGRAM_API_KEYS_FILE", null);
        if (file != null) {
            try {
                keys.addAll(ApiKeys.parseFile(Path.of(file)));
            } catch (IllegalArgumentException e) {
                throw invalid("ENGRAM_API_KEYS_FILE", e.getMessage());
            }
        }
        if (enabled && keys.isEmpty()) {
            throw invalid(
                    "ENGRAM_API_KEYS",
                    "(or ENGRAM_API_KEYS_FILE) must give at least one key, or set ENGRAM_AUTH=disabled to serve"
                            + " without authentication");
        }
        return new Security(enabled, keys);
    }

    /** The comma-separated namespaces of ENGRAM_AGENT_NAMESPACES, each a valid namespace name. */
    private static Set<String> agentNamespaces(String list) {
        Set<String> out = new TreeSet<>();
        for (String ns : list.split(",")) {
            String n = ns.strip();
            if (n.isEmpty()) {
                continue;
            }
            if (!n.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}")) {
                throw invalid("ENGRAM_AGENT_NAMESPACES", "lists '" + n + "', which is not a namespace name");
            }
            out.add(n);
        }
        return out;
    }

    /** How a remote model's passages are held, retried and given up on. */
    private static UnderstandingWorkers.Settings workers(Env env) {
        Duration first = Duration.ofMillis(env.integer("ENGRAM_UNDERSTAND_BACKOFF_MS", 5_000, 1, Integer.MAX_VALUE));
        Duration max =
                Duration.ofMillis(env.integer("ENGRAM_UNDERSTAND_MAX_BACKOFF_MS", 300_000, 1, Integer.MAX_VALUE));
        if (max.compareTo(first) < 0) {
            throw invalid("ENGRAM_UNDERSTAND_MAX_BACKOFF_MS", "must not be below ENGRAM_UNDERSTAND_BACKOFF_MS");
        }
        return new UnderstandingWorkers.Settings(
                env.integer("ENGRAM_UNDERSTAND_IN_FLIGHT", 16, 1, 100_000),
                Duration.ofMinutes(env.integer("ENGRAM_UNDERSTAND_RETRY_FOR_MINUTES", 1440, 0, 525_600)),
                first,
                max);
    }

    /** The LLM settings, or null when no ENGRAM_LLM_BASE_URL is set. */
    private static LlmConfig llm(Env env) {
        String url = env.string("ENGRAM_LLM_BASE_URL", null);
        if (url == null) {
            return null;
        }
        URI base;
        try {
            base = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw invalid("ENGRAM_LLM_BASE_URL", "is not a URL");
        }
        return new LlmConfig(
                base,
                env.string("ENGRAM_LLM_MODEL", ""),
                env.string("ENGRAM_LLM_API_KEY", ""),
                Duration.ofMillis(env.integer("ENGRAM_LLM_TIMEOUT_MS", 60_000, 1, Integer.MAX_VALUE)),
                env.integer("ENGRAM_LLM_MAX_RETRIES", 4, 0, 20),
                env.integer("ENGRAM_LLM_CONCURRENCY", 4, 1, 256),
                env.decimal("ENGRAM_LLM_PROMPT_PRICE_PER_MTOK", 0),
                env.decimal("ENGRAM_LLM_COMPLETION_PRICE_PER_MTOK", 0),
                env.string("ENGRAM_LLM_EMBEDDING_MODEL", ""));
    }

    public EngramConfig withBootstrapServers(String servers) {
        return new EngramConfig(
                kafka.withBootstrapServers(servers), http, storage, ingest, understanding, query, security, mirrors);
    }

    static IllegalArgumentException invalid(String name, String message) {
        return new IllegalArgumentException("invalid configuration: " + name + " " + message);
    }

    /** Reads and checks variables; every message names the variable. */
    private record Env(Map<String, String> variables) {

        static final String KAFKA_PREFIX = "ENGRAM_KAFKA_";

        String string(String name, String fallback) {
            String v = variables.get(name);
            return v == null || v.isBlank() ? fallback : v.strip();
        }

        /**
         * Kafka client settings passed through: {@code ENGRAM_KAFKA_SASL_MECHANISM=PLAIN} becomes
         * {@code sasl.mechanism=PLAIN} (lower case, {@code _} read as {@code .}).
         */
        Map<String, String> kafkaClientProperties() {
            Map<String, String> out = new TreeMap<>();
            variables.forEach((name, value) -> {
                if (name.startsWith(KAFKA_PREFIX) && name.length() > KAFKA_PREFIX.length() && value != null) {
                    String key = name.substring(KAFKA_PREFIX.length())
                            .toLowerCase(Locale.ROOT)
                            .replace('_', '.');
                    if (Kafka.RESERVED.contains(key)) {
                        throw invalid(name, "sets " + key + ", which Engram sets itself");
                    }
                    out.put(key, value);
                }
            });
            return out;
        }

        /** A name made of the given characters (ids, prefixes). */
        String name(String name, String fallback, String pattern) {
            String v = string(name, fallback);
            if (v != null && !v.matches(pattern)) {
                throw invalid(name, "must be letters, digits, '.', '_' or '-'");
            }
            return v;
        }

        int integer(String name, int fallback, int min, int max) {
            String v = string(name, null);
            if (v == null) {
                return fallback;
            }
            int n;
            try {
                n = Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw invalid(name, "must be an integer, was '" + v + "'");
            }
            if (n < min || n > max) {
                throw invalid(
                        name, max == Integer.MAX_VALUE ? "must be at least " + min : "must be " + min + "-" + max);
            }
            return n;
        }

        double decimal(String name, double fallback) {
            String v = string(name, null);
            if (v == null) {
                return fallback;
            }
            try {
                return Double.parseDouble(v);
            } catch (NumberFormatException e) {
                throw invalid(name, "must be a number, was '" + v + "'");
            }
        }

        boolean bool(String name, boolean fallback) {
            String v = string(name, null);
            if (v == null) {
                return fallback;
            }
            return switch (v.toLowerCase(Locale.ROOT)) {
                case "true", "1", "yes", "on" -> true;
                case "false", "0", "no", "off" -> false;
                default -> throw invalid(name, "must be true or false, was '" + v + "'");
            };
        }
    }
}
