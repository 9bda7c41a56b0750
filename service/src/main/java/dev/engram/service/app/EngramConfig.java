package dev.engram.service.app;

import dev.engram.processors.ExtractionCacheScope;
import dev.engram.processors.MergeModel;
import dev.engram.processors.UnderstandingWorkers;
import dev.engram.query.VectorSearch;
import dev.engram.service.http.ApiKeys;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.QdrantMirror;
import dev.engram.understanding.LocalModel;
import dev.engram.understanding.llm.LlmConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

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
     * which passages share a cached extraction; {@code mergeModel} is how entity resolution merges.
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
            Agent agent,
            MergeModel mergeModel) {

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
            Objects.requireNonNull(mergeModel, "mergeModel");
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
    }

    /** The read side: vector search and query snapshots. */
    public record Query(
            VectorSearch vectorSearch,
            long snapshotMaxStalenessMs,
            long snapshotBackgroundMs,
            long snapshotMemoryBytes,
            Duration snapshotIdle,
            double snapshotBuildShare,
            int snapshotRecentPassages) {}

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
        return EngramConfigReader.read(variables);
    }

    public EngramConfig withBootstrapServers(String servers) {
        return new EngramConfig(
                kafka.withBootstrapServers(servers), http, storage, ingest, understanding, query, security, mirrors);
    }
}
