package dev.engram.service.app;

import static dev.engram.service.app.ConfigVariables.checkedList;
import static dev.engram.service.app.ConfigVariables.invalid;

import dev.engram.processors.ExtractionCacheScope;
import dev.engram.processors.MergeModel;
import dev.engram.processors.UnderstandingWorkers;
import dev.engram.query.GraphLoader;
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
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Builds an {@link EngramConfig} out of {@code ENGRAM_*} variables: each section read and checked in turn, so a bad
 * setting fails at start with a message naming it.
 */
final class EngramConfigReader {

    private EngramConfigReader() {}

    /** The configuration out of these {@code ENGRAM_*} variables; unset ones take their defaults. */
    static EngramConfig read(Map<String, String> variables) {
        ConfigVariables env = new ConfigVariables(variables);
        String bootstrap = env.string("ENGRAM_BOOTSTRAP_SERVERS", null);
        boolean embedded = env.bool("ENGRAM_EMBEDDED_KAFKA", bootstrap == null);
        if (!embedded && bootstrap == null) {
            throw invalid("ENGRAM_BOOTSTRAP_SERVERS", "must be set when ENGRAM_EMBEDDED_KAFKA=false");
        }
        EngramConfig.Kafka kafka = new EngramConfig.Kafka(
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
        EngramConfig.Http http = new EngramConfig.Http(
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
                env.integer("ENGRAM_HTTP_MANAGEMENT_PORT", EngramConfig.Http.NO_MANAGEMENT_PORT, 0, 65535));
        EngramConfig.Storage storage = new EngramConfig.Storage(
                Path.of(env.string("ENGRAM_STATE_DIR", ".engram/state")),
                env.integer("ENGRAM_ROCKSDB_MEMORY_MB", 128, 8, 1 << 20) * (1L << 20));
        EngramConfig.Ingest ingest = new EngramConfig.Ingest(
                env.integer("ENGRAM_MAX_DOCUMENT_BYTES", 1 << 20, 1024, Integer.MAX_VALUE),
                env.integer("ENGRAM_CHUNK_MAX_TOKENS", 200, 16, 4096));
        EngramConfig.Understanding.Kind kind =
                switch (env.string("ENGRAM_UNDERSTANDING", "embedded")) {
                    case "embedded" -> EngramConfig.Understanding.Kind.EMBEDDED;
                    case "llm" -> EngramConfig.Understanding.Kind.LLM;
                    default -> throw invalid("ENGRAM_UNDERSTANDING", "must be 'embedded' or 'llm'");
                };
        LlmConfig llm = llm(env);
        if (kind == EngramConfig.Understanding.Kind.LLM && llm == null) {
            throw invalid("ENGRAM_LLM_BASE_URL", "must be set for llm understanding");
        }
        EngramConfig.Agent agent =
                switch (env.string("ENGRAM_CONSTRUCTION", "deterministic")) {
                    case "deterministic" -> null;
                    case "agent" ->
                        new EngramConfig.Agent(
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
        EngramConfig.Understanding understanding = new EngramConfig.Understanding(
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
                agent,
                mergeModel(env.string("ENGRAM_MERGE_MODEL", "score")));
        EngramConfig.Query query = new EngramConfig.Query(
                new VectorSearch(
                        env.integer("ENGRAM_ANN_MIN_VECTORS", 20_000, 1, Integer.MAX_VALUE),
                        env.integer("ENGRAM_ANN_EF", 100, 1, 10_000),
                        env.integer("ENGRAM_ANN_M", EngramHnswFormat.DEFAULT_MAX_CONN, 2, 512),
                        env.integer("ENGRAM_ANN_BEAM_WIDTH", EngramHnswFormat.DEFAULT_BEAM_WIDTH, 8, 3200),
                        env.bool("ENGRAM_ANN_BACKGROUND_WRITES", true),
                        quantization(env.string("ENGRAM_ANN_QUANTIZATION", "none"))),
                env.integer("ENGRAM_SNAPSHOT_MAX_STALENESS_MS", 1000, 0, 3_600_000),
                env.integer("ENGRAM_SNAPSHOT_BACKGROUND_MS", 50, 0, Integer.MAX_VALUE),
                env.integer("ENGRAM_SNAPSHOT_MEMORY_MB", 1024, 16, 1 << 20) * (1L << 20),
                Duration.ofMinutes(env.integer("ENGRAM_SNAPSHOT_IDLE_MINUTES", 30, 1, 525_600)),
                env.integer("ENGRAM_SNAPSHOT_BUILD_PERCENT", 25, 1, 100) / 100.0,
                env.integer("ENGRAM_SNAPSHOT_RECENT_PASSAGES", GraphLoader.Settings.RECENT_PASSAGES, 0, 1_000_000));
        return new EngramConfig(kafka, http, storage, ingest, understanding, query, security(env), mirrors(env));
    }

    /** {@code score} (the shipped merge score), {@code rules} (the rules alone) or the path of a fitted model. */
    private static MergeModel mergeModel(String value) {
        switch (value) {
            case "score":
                return MergeModel.shipped();
            case "rules":
                return MergeModel.RULES;
            default:
                try (InputStream in = Files.newInputStream(Path.of(value))) {
                    return MergeModel.read(in);
                } catch (IOException | RuntimeException e) {
                    throw invalid(
                            "ENGRAM_MERGE_MODEL",
                            "must be 'score', 'rules' or a readable merge model (" + e.getMessage() + ")");
                }
        }
    }

    private static LocalModel embedder(ConfigVariables env) {
        String id = env.string("ENGRAM_EMBEDDER", LocalModel.BGE_SMALL_EN_V15_Q.id());
        try {
            return LocalModel.byId(id);
        } catch (IllegalArgumentException e) {
            throw invalid("ENGRAM_EMBEDDER", "must be one of " + LocalModel.ids());
        }
    }

    private static EngramConfig.Mirrors mirrors(ConfigVariables env) {
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
        return new EngramConfig.Mirrors(
                neo4j,
                qdrant,
                env.integer("ENGRAM_SINK_BATCH_SIZE", 500, 1, 100_000),
                env.integer("ENGRAM_SINK_RETRIES", 5, 0, 100),
                Duration.ofMillis(env.integer("ENGRAM_SINK_BACKOFF_MS", 200, 1, Integer.MAX_VALUE)),
                Duration.ofMillis(env.integer("ENGRAM_SINK_PAUSE_MS", 30_000, 1, Integer.MAX_VALUE)),
                Duration.ofMillis(env.integer("ENGRAM_MIRROR_REPAIR_INTERVAL_MS", 60_000, 100, Integer.MAX_VALUE)),
                env.bool("ENGRAM_MIRROR_SINK", true));
    }

    private static EngramConfig.Security security(ConfigVariables env) {
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
        return new EngramConfig.Security(enabled, keys);
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
    private static UnderstandingWorkers.Settings workers(ConfigVariables env) {
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
    private static LlmConfig llm(ConfigVariables env) {
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

    private static EngramHnswFormat.Quantization quantization(String name) {
        try {
            return EngramHnswFormat.Quantization.of(name);
        } catch (IllegalArgumentException e) {
            throw invalid("ENGRAM_ANN_QUANTIZATION", "must be none, int8, int4 or bit1");
        }
    }
}
