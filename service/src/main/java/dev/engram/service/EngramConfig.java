package dev.engram.service;

import dev.engram.query.VectorSearch;
import dev.engram.understanding.llm.LlmConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The service configuration, read from {@code ENGRAM_*} environment variables; validated on construction so that a
 * bad setting fails at start with a message naming it. Every setting and its default is documented in the README.
 */
public record EngramConfig(
        boolean embeddedKafka,
        String bootstrapServers,
        int embeddedKafkaPort,
        String applicationId,
        String topicPrefix,
        int partitions,
        short replicationFactor,
        Path stateDir,
        String httpHost,
        int httpPort,
        String advertisedHost,
        int advertisedPort,
        int streamThreads,
        int memoryThreads,
        long rocksDbMemoryBytes,
        int maxDocumentBytes,
        int chunkMaxTokens,
        int embedMaxTokens,
        int embedThreads,
        long commitIntervalMs,
        String understanding,
        int questionsPerPassage,
        LlmConfig llm,
        VectorSearch vectorSearch,
        long snapshotBackgroundMs) {

    public EngramConfig {
        if (!embeddedKafka && (bootstrapServers == null || bootstrapServers.isBlank())) {
            throw invalid("ENGRAM_BOOTSTRAP_SERVERS", "must be set when ENGRAM_EMBEDDED_KAFKA=false");
        }
        require(embeddedKafkaPort >= 0 && embeddedKafkaPort <= 65535, "ENGRAM_EMBEDDED_KAFKA_PORT", "must be 0-65535");
        require(
                applicationId != null && applicationId.matches("[A-Za-z0-9._-]+"),
                "ENGRAM_APPLICATION_ID",
                "must be letters, digits, '.', '_' or '-'");
        require(
                topicPrefix != null && topicPrefix.matches("[A-Za-z0-9._-]*"),
                "ENGRAM_TOPIC_PREFIX",
                "must be letters, digits, '.', '_' or '-'");
        require(partitions >= 1 && partitions <= 10_000, "ENGRAM_PARTITIONS", "must be 1-10000");
        require(replicationFactor >= 1, "ENGRAM_REPLICATION_FACTOR", "must be at least 1");
        require(stateDir != null, "ENGRAM_STATE_DIR", "must be set");
        require(httpPort >= 0 && httpPort <= 65535, "ENGRAM_HTTP_PORT", "must be 0-65535");
        require(advertisedHost != null && !advertisedHost.isBlank(), "ENGRAM_ADVERTISED_HOST", "must be set");
        require(advertisedPort >= 0 && advertisedPort <= 65535, "ENGRAM_ADVERTISED_PORT", "must be 0-65535");
        require(streamThreads >= 1 && streamThreads <= 64, "ENGRAM_STREAM_THREADS", "must be 1-64");
        require(memoryThreads >= 1 && memoryThreads <= 64, "ENGRAM_MEMORY_THREADS", "must be 1-64");
        require(rocksDbMemoryBytes >= 8L << 20, "ENGRAM_ROCKSDB_MEMORY_MB", "must be at least 8");
        require(maxDocumentBytes >= 1024, "ENGRAM_MAX_DOCUMENT_BYTES", "must be at least 1024");
        require(chunkMaxTokens >= 16 && chunkMaxTokens <= 4096, "ENGRAM_CHUNK_MAX_TOKENS", "must be 16-4096");
        require(embedMaxTokens >= 16 && embedMaxTokens <= 512, "ENGRAM_EMBED_MAX_TOKENS", "must be 16-512");
        require(embedThreads >= 1 && embedThreads <= 64, "ENGRAM_EMBED_THREADS", "must be 1-64");
        require(commitIntervalMs >= 10, "ENGRAM_COMMIT_INTERVAL_MS", "must be at least 10");
        require(
                understanding != null && (understanding.equals("embedded") || understanding.equals("llm")),
                "ENGRAM_UNDERSTANDING",
                "must be 'embedded' or 'llm'");
        require(questionsPerPassage >= 0 && questionsPerPassage <= 20, "ENGRAM_QUESTIONS_PER_PASSAGE", "must be 0-20");
        require(
                !understanding.equals("llm") || llm != null,
                "ENGRAM_LLM_BASE_URL",
                "must be set for llm understanding");
        require(vectorSearch != null && vectorSearch.minVectors() >= 1, "ENGRAM_ANN_MIN_VECTORS", "must be at least 1");
        require(vectorSearch.ef() >= 1 && vectorSearch.ef() <= 10_000, "ENGRAM_ANN_EF", "must be 1-10000");
        require(snapshotBackgroundMs >= 0, "ENGRAM_SNAPSHOT_BACKGROUND_MS", "must be at least 0");
    }

    /** Reads the configuration from the process environment. */
    public static EngramConfig fromEnvironment() {
        return from(System.getenv());
    }

    /** Reads the configuration from a map of {@code ENGRAM_*} variables; unset ones take their defaults. */
    public static EngramConfig from(Map<String, String> env) {
        Function<String, String> get = name -> {
            String v = env.get(name);
            return v == null || v.isBlank() ? null : v.strip();
        };
        String bootstrap = get.apply("ENGRAM_BOOTSTRAP_SERVERS");
        boolean embedded = bool(get, "ENGRAM_EMBEDDED_KAFKA", bootstrap == null);
        int httpPort = integer(get, "ENGRAM_HTTP_PORT", 8080);
        return new EngramConfig(
                embedded,
                embedded ? null : bootstrap,
                integer(get, "ENGRAM_EMBEDDED_KAFKA_PORT", 9092),
                string(get, "ENGRAM_APPLICATION_ID", "engram"),
                string(get, "ENGRAM_TOPIC_PREFIX", "engram."),
                integer(get, "ENGRAM_PARTITIONS", 4),
                (short) integer(get, "ENGRAM_REPLICATION_FACTOR", 1),
                Path.of(string(get, "ENGRAM_STATE_DIR", ".engram/state")),
                string(get, "ENGRAM_HTTP_HOST", "0.0.0.0"),
                httpPort,
                string(get, "ENGRAM_ADVERTISED_HOST", "localhost"),
                integer(get, "ENGRAM_ADVERTISED_PORT", httpPort),
                integer(get, "ENGRAM_STREAM_THREADS", 2),
                integer(get, "ENGRAM_MEMORY_THREADS", 1),
                integer(get, "ENGRAM_ROCKSDB_MEMORY_MB", 128) * (1L << 20),
                integer(get, "ENGRAM_MAX_DOCUMENT_BYTES", 1 << 20),
                integer(get, "ENGRAM_CHUNK_MAX_TOKENS", 200),
                integer(get, "ENGRAM_EMBED_MAX_TOKENS", 256),
                integer(get, "ENGRAM_EMBED_THREADS", 1),
                integer(get, "ENGRAM_COMMIT_INTERVAL_MS", 200),
                string(get, "ENGRAM_UNDERSTANDING", "embedded"),
                integer(get, "ENGRAM_QUESTIONS_PER_PASSAGE", 3),
                llm(get),
                new VectorSearch(integer(get, "ENGRAM_ANN_MIN_VECTORS", 50_000), integer(get, "ENGRAM_ANN_EF", 100)),
                integer(get, "ENGRAM_SNAPSHOT_BACKGROUND_MS", 1000));
    }

    /** The LLM settings, or null when no ENGRAM_LLM_BASE_URL is set. */
    private static LlmConfig llm(Function<String, String> get) {
        String url = get.apply("ENGRAM_LLM_BASE_URL");
        if (url == null) {
            return null;
        }
        URI base;
        try {
            base = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw invalid("ENGRAM_LLM_BASE_URL", "is not a URL: '" + url + "'");
        }
        return new LlmConfig(
                base,
                string(get, "ENGRAM_LLM_MODEL", ""),
                string(get, "ENGRAM_LLM_API_KEY", ""),
                Duration.ofMillis(integer(get, "ENGRAM_LLM_TIMEOUT_MS", 60_000)),
                integer(get, "ENGRAM_LLM_MAX_RETRIES", 4),
                integer(get, "ENGRAM_LLM_CONCURRENCY", 4),
                decimal(get, "ENGRAM_LLM_PROMPT_PRICE_PER_MTOK", 0),
                decimal(get, "ENGRAM_LLM_COMPLETION_PRICE_PER_MTOK", 0),
                string(get, "ENGRAM_LLM_EMBEDDING_MODEL", ""));
    }

    private static double decimal(Function<String, String> get, String name, double fallback) {
        String v = get.apply(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw invalid(name, "must be a number, was '" + v + "'");
        }
    }

    /** The {@code host:port} other instances reach this instance's HTTP API at (Kafka Streams application.server). */
    public String applicationServer() {
        return advertisedHost + ":" + advertisedPort;
    }

    public URI advertisedUri() {
        return URI.create("http://" + applicationServer());
    }

    public EngramConfig withBootstrapServers(String servers) {
        return new EngramConfig(
                false,
                servers,
                embeddedKafkaPort,
                applicationId,
                topicPrefix,
                partitions,
                replicationFactor,
                stateDir,
                httpHost,
                httpPort,
                advertisedHost,
                advertisedPort,
                streamThreads,
                memoryThreads,
                rocksDbMemoryBytes,
                maxDocumentBytes,
                chunkMaxTokens,
                embedMaxTokens,
                embedThreads,
                commitIntervalMs,
                understanding,
                questionsPerPassage,
                llm,
                vectorSearch,
                snapshotBackgroundMs);
    }

    public EngramConfig withHttp(int port, int advertised) {
        return new EngramConfig(
                embeddedKafka,
                bootstrapServers,
                embeddedKafkaPort,
                applicationId,
                topicPrefix,
                partitions,
                replicationFactor,
                stateDir,
                httpHost,
                port,
                advertisedHost,
                advertised,
                streamThreads,
                memoryThreads,
                rocksDbMemoryBytes,
                maxDocumentBytes,
                chunkMaxTokens,
                embedMaxTokens,
                embedThreads,
                commitIntervalMs,
                understanding,
                questionsPerPassage,
                llm,
                vectorSearch,
                snapshotBackgroundMs);
    }

    private static String string(Function<String, String> get, String name, String fallback) {
        String v = get.apply(name);
        return v == null ? fallback : v;
    }

    private static int integer(Function<String, String> get, String name, int fallback) {
        String v = get.apply(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw invalid(name, "must be an integer, was '" + v + "'");
        }
    }

    private static boolean bool(Function<String, String> get, String name, boolean fallback) {
        String v = get.apply(name);
        if (v == null) {
            return fallback;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw invalid(name, "must be true or false, was '" + v + "'");
        };
    }

    private static void require(boolean ok, String name, String message) {
        if (!ok) {
            throw invalid(name, message);
        }
    }

    static IllegalArgumentException invalid(String name, String message) {
        return new IllegalArgumentException("invalid configuration: " + name + " " + message);
    }
}
