package dev.engram.service.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.metrics.Meters;
import dev.engram.processors.ExtractionCacheScope;
import dev.engram.processors.MergeModel;
import dev.engram.query.VectorSearch;
import dev.engram.retrieval.EngramHnswFormat;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.service.cli.EvalCommand;
import dev.engram.service.http.ApiKeys;
import dev.engram.understanding.LocalModel;
import dev.engram.understanding.Understander;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngramConfigTest {

    /** The settings with authentication disabled unless they say otherwise: these tests are about the rest. */
    private static EngramConfig from(Map<String, String> settings) {
        Map<String, String> env = new HashMap<>(Map.of("ENGRAM_AUTH", "disabled"));
        env.putAll(settings);
        return EngramConfig.from(env);
    }

    @Test
    void mirrorsAreOffUnlessAUriSaysWhereAndTheirSecretsAreNeverShown() {
        assertThat(from(Map.of()).mirrors().enabled()).isFalse();

        EngramConfig both = from(Map.of(
                "ENGRAM_NEO4J_URI", "neo4j+s://graph.example:7687",
                "ENGRAM_NEO4J_PASSWORD", "neo-secret",
                "ENGRAM_QDRANT_URL", "https://vectors.example",
                "ENGRAM_QDRANT_API_KEY", "qdrant-secret",
                "ENGRAM_SINK_BATCH_SIZE", "50"));
        assertThat(both.mirrors().enabled()).isTrue();
        assertThat(both.mirrors().neo4j().user()).isEqualTo("neo4j");
        assertThat(both.mirrors().qdrant().host()).isEqualTo("vectors.example");
        assertThat(both.mirrors().qdrant().port()).isEqualTo(6334);
        assertThat(both.mirrors().qdrant().tls()).isTrue();
        assertThat(both.mirrors().qdrant().collectionPrefix()).isEqualTo("engram_");
        assertThat(both.mirrors().batchSize()).isEqualTo(50);
        assertThat(both.toString()).doesNotContain("neo-secret").doesNotContain("qdrant-secret");

        EngramConfig plain = from(Map.of("ENGRAM_QDRANT_URL", "qdrant:7000"));
        assertThat(plain.mirrors().neo4j()).isNull();
        assertThat(plain.mirrors().qdrant().port()).isEqualTo(7000);
        assertThat(plain.mirrors().qdrant().tls()).isFalse();
    }

    @Test
    void aRemoteModelsWorkersAreBoundedAndTheirRetriesConfigured() {
        var defaults = from(Map.of()).understanding().workers();
        assertThat(defaults.capacity()).isEqualTo(16);
        assertThat(defaults.retryFor()).isEqualTo(Duration.ofHours(24));

        var set = from(Map.of(
                        "ENGRAM_UNDERSTAND_IN_FLIGHT", "3",
                        "ENGRAM_UNDERSTAND_BACKOFF_MS", "10",
                        "ENGRAM_UNDERSTAND_MAX_BACKOFF_MS", "20",
                        "ENGRAM_UNDERSTAND_RETRY_FOR_MINUTES", "0"))
                .understanding()
                .workers();
        assertThat(set.capacity()).isEqualTo(3);
        assertThat(set.maxBackoff()).isEqualTo(Duration.ofMillis(20));
        assertThat(set.retryFor()).isZero();

        assertThatThrownBy(() -> from(Map.of("ENGRAM_UNDERSTAND_IN_FLIGHT", "0")))
                .hasMessageContaining("ENGRAM_UNDERSTAND_IN_FLIGHT");
        assertThatThrownBy(() ->
                        from(Map.of("ENGRAM_UNDERSTAND_BACKOFF_MS", "500", "ENGRAM_UNDERSTAND_MAX_BACKOFF_MS", "100")))
                .hasMessageContaining("ENGRAM_UNDERSTAND_MAX_BACKOFF_MS");
    }

    @Test
    void aManagementPortIsOptionalAndChecked() {
        assertThat(from(Map.of()).http().managementPort()).isEqualTo(EngramConfig.Http.NO_MANAGEMENT_PORT);
        assertThat(from(Map.of("ENGRAM_HTTP_MANAGEMENT_PORT", "9090")).http().managementPort())
                .isEqualTo(9090);
        for (String bad : new String[] {"-1", "65536", "x"}) {
            assertThatThrownBy(() -> from(Map.of("ENGRAM_HTTP_MANAGEMENT_PORT", bad)))
                    .as(bad)
                    .hasMessageContaining("ENGRAM_HTTP_MANAGEMENT_PORT");
        }
    }

    @Test
    void allowedOriginsAndHostsAreCheckedAtStart() {
        EngramConfig.Http http = from(Map.of(
                        "ENGRAM_HTTP_ALLOWED_ORIGINS", "https://app.example.com, http://tools.example:3000",
                        "ENGRAM_HTTP_ALLOWED_HOSTS", " engram.lan ,proxy.example,*"))
                .http();
        assertThat(http.allowedOrigins()).containsExactly("https://app.example.com", "http://tools.example:3000");
        assertThat(http.allowedHosts()).containsExactly("engram.lan", "proxy.example", "*");
        assertThat(from(Map.of()).http().allowedHosts()).isEmpty();
        assertThatThrownBy(() -> from(Map.of("ENGRAM_HTTP_ALLOWED_HOSTS", "engram.lan:8080")))
                .hasMessageContaining("ENGRAM_HTTP_ALLOWED_HOSTS")
                .hasMessageContaining("engram.lan:8080");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_HTTP_ALLOWED_ORIGINS", "app.example.com")))
                .hasMessageContaining("ENGRAM_HTTP_ALLOWED_ORIGINS");
    }

    @Test
    void entityResolutionMergesByTheShippedScoreByTheRulesOrByAFittedModel(@TempDir Path dir) throws Exception {
        assertThat(from(Map.of()).understanding().mergeModel()).isEqualTo(MergeModel.shipped());
        assertThat(from(Map.of("ENGRAM_MERGE_MODEL", "rules"))
                        .understanding()
                        .mergeModel()
                        .byRulesAlone())
                .isTrue();
        Path fitted = dir.resolve("model.json");
        Files.writeString(fitted, "{\"id\":\"ours/1\",\"intercept\":-3,\"weights\":{\"co_mentioned\":9}}");
        assertThat(from(Map.of("ENGRAM_MERGE_MODEL", fitted.toString()))
                        .understanding()
                        .mergeModel()
                        .id())
                .isEqualTo("ours/1");
        Files.writeString(fitted, "{\"id\":\"ours/2\",\"intercept\":0,\"weights\":{\"shoe_size\":1}}");
        for (String bad :
                new String[] {fitted.toString(), dir.resolve("missing.json").toString()}) {
            assertThatThrownBy(() -> from(Map.of("ENGRAM_MERGE_MODEL", bad)))
                    .as(bad)
                    .hasMessageContaining("ENGRAM_MERGE_MODEL");
        }
    }

    @Test
    void reusedEntityAndFactVectorsAreBoundedOrOff() {
        assertThat(from(Map.of()).understanding().embedReuseTexts()).isEqualTo(20_000);
        assertThat(from(Map.of("ENGRAM_EMBED_REUSE_TEXTS", "0")).understanding().embedReuseTexts())
                .isZero();
        assertThatThrownBy(() -> from(Map.of("ENGRAM_EMBED_REUSE_TEXTS", "-1")))
                .hasMessageContaining("ENGRAM_EMBED_REUSE_TEXTS");
    }

    @Test
    void theLocalEmbedderIsChosenByItsModelId() {
        assertThat(from(Map.of()).understanding().embedder()).isEqualTo(LocalModel.BGE_SMALL_EN_V15_Q);
        assertThat(from(Map.of("ENGRAM_EMBEDDER", "all-minilm-l6-v2-q"))
                        .understanding()
                        .embedder())
                .isEqualTo(LocalModel.ALL_MINILM_L6_V2_Q);
        assertThatThrownBy(() -> from(Map.of("ENGRAM_EMBEDDER", "text-embedding-3-small")))
                .hasMessageContaining("ENGRAM_EMBEDDER")
                .hasMessageContaining("all-minilm-l6-v2-q");
    }

    @Test
    void howStaleASnapshotMayBeIsConfigured() {
        assertThat(from(Map.of()).query().snapshotMaxStalenessMs()).isEqualTo(1000);
        assertThat(from(Map.of("ENGRAM_SNAPSHOT_MAX_STALENESS_MS", "0")).query().snapshotMaxStalenessMs())
                .isZero();
        assertThatThrownBy(() -> from(Map.of("ENGRAM_SNAPSHOT_MAX_STALENESS_MS", "-1")))
                .hasMessageContaining("ENGRAM_SNAPSHOT_MAX_STALENESS_MS");
        assertThat(from(Map.of()).query().snapshotBuildShare()).isEqualTo(0.25);
        assertThat(from(Map.of("ENGRAM_SNAPSHOT_BUILD_PERCENT", "100")).query().snapshotBuildShare())
                .isEqualTo(1.0);
        for (String bad : new String[] {"0", "101", "half"}) {
            assertThatThrownBy(() -> from(Map.of("ENGRAM_SNAPSHOT_BUILD_PERCENT", bad)))
                    .hasMessageContaining("ENGRAM_SNAPSHOT_BUILD_PERCENT");
        }
        assertThat(from(Map.of()).query().snapshotRecentPassages()).isEqualTo(5_000);
        assertThat(from(Map.of("ENGRAM_SNAPSHOT_RECENT_PASSAGES", "0")).query().snapshotRecentPassages())
                .as("recent layers off")
                .isZero();
        for (String bad : new String[] {"-1", "1000001", "many"}) {
            assertThatThrownBy(() -> from(Map.of("ENGRAM_SNAPSHOT_RECENT_PASSAGES", bad)))
                    .hasMessageContaining("ENGRAM_SNAPSHOT_RECENT_PASSAGES");
        }
        for (String bad : new String[] {"-1", "51"}) {
            assertThatThrownBy(() -> EvalCommand.run(
                            List.of("--data", "set", "--late-percent", bad),
                            from(Map.of()),
                            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                    .hasMessageContaining("--late-percent must be 0-50");
        }
    }

    @Test
    void cachedExtractionsStayWithinTheirNamespaceUnlessSharedOnPurpose() {
        assertThat(from(Map.of()).understanding().cacheScope()).isEqualTo(ExtractionCacheScope.NAMESPACE);
        assertThat(from(Map.of("ENGRAM_EXTRACTION_CACHE_SCOPE", "global"))
                        .understanding()
                        .cacheScope())
                .isEqualTo(ExtractionCacheScope.GLOBAL);
        assertThatThrownBy(() -> from(Map.of("ENGRAM_EXTRACTION_CACHE_SCOPE", "tenant")))
                .hasMessageContaining("ENGRAM_EXTRACTION_CACHE_SCOPE");
    }

    @Test
    void badMirrorSettingsFailNamingTheVariable() {
        assertThatThrownBy(() -> from(Map.of("ENGRAM_NEO4J_URI", "http://graph:7474")))
                .hasMessageContaining("ENGRAM_NEO4J_URI");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_QDRANT_URL", "http://")))
                .hasMessageContaining("ENGRAM_QDRANT_URL");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_QDRANT_URL", "q:1", "ENGRAM_QDRANT_COLLECTION_PREFIX", "a b")))
                .hasMessageContaining("ENGRAM_QDRANT_COLLECTION_PREFIX");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_SINK_BATCH_SIZE", "0")))
                .hasMessageContaining("ENGRAM_SINK_BATCH_SIZE");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_SINK_RETRIES", "many")))
                .hasMessageContaining("ENGRAM_SINK_RETRIES");
    }

    @Test
    void requiresApiKeysUnlessAuthenticationIsExplicitlyDisabled(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> EngramConfig.from(Map.of()))
                .hasMessageContaining("ENGRAM_API_KEYS")
                .hasMessageContaining("ENGRAM_AUTH=disabled");
        assertThat(EngramConfig.from(Map.of("ENGRAM_AUTH", "disabled"))
                        .security()
                        .enabled())
                .isFalse();
        assertThatThrownBy(() -> EngramConfig.from(Map.of("ENGRAM_AUTH", "off")))
                .hasMessageContaining("ENGRAM_AUTH");

        EngramConfig inline = EngramConfig.from(Map.of("ENGRAM_API_KEYS", "admin:*:k1; read:notes,wiki:k2"));
        assertThat(inline.security().enabled()).isTrue();
        assertThat(inline.security().keys())
                .extracting(ApiKeys.Key::role)
                .containsExactly(ApiKeys.Role.ADMIN, ApiKeys.Role.READ);
        assertThat(inline.toString()).doesNotContain("k1").doesNotContain("k2");
        assertThatThrownBy(() -> EngramConfig.from(Map.of("ENGRAM_API_KEYS", "owner:*:k1")))
                .hasMessageContaining("ENGRAM_API_KEYS")
                .hasMessageContaining("role");
        assertThatThrownBy(() -> EngramConfig.from(Map.of("ENGRAM_API_KEYS", "read::k1")))
                .hasMessageContaining("namespace");

        Path file = dir.resolve("keys.json");
        Files.writeString(
                file,
                "[{\"name\": \"ci\", \"role\": \"write\", \"namespaces\": [\"wiki\"], \"sha256\": \""
                        + HexFormat.of().formatHex(ApiKeys.sha256("ci-secret")) + "\"}]");
        EngramConfig fromFile = EngramConfig.from(Map.of("ENGRAM_API_KEYS_FILE", file.toString()));
        ApiKeys keys = new ApiKeys(fromFile.security().keys());
        assertThat(keys.authenticate("ci-secret")).hasValueSatisfying(k -> {
            assertThat(k.name()).isEqualTo("ci");
            assertThat(k.allows("wiki")).isTrue();
            assertThat(k.allows("other")).isFalse();
            assertThat(k.role().includes(ApiKeys.Role.READ)).isTrue();
            assertThat(k.role().includes(ApiKeys.Role.ADMIN)).isFalse();
        });
        assertThat(keys.authenticate("ci-secre")).isEmpty();
        assertThat(keys.authenticate("")).isEmpty();
        Files.writeString(file, "{\"not\": \"an array\"}");
        assertThatThrownBy(() -> EngramConfig.from(Map.of("ENGRAM_API_KEYS_FILE", file.toString())))
                .hasMessageContaining("ENGRAM_API_KEYS_FILE");
    }

    @Test
    void defaultsToTheEmbeddedBroker() {
        EngramConfig c = from(Map.of());

        assertThat(c.kafka().embedded()).isTrue();
        assertThat(c.kafka().applicationId()).isEqualTo("engram");
        assertThat(c.http().port()).isEqualTo(8080);
        assertThat(c.http().applicationServer()).isEqualTo("localhost:8080");
        assertThat(c.storage().stateDir()).isEqualTo(Path.of(".engram/state"));
        assertThat(c.kafka().partitions()).isEqualTo(4);
    }

    @Test
    void usesAnExternalClusterWhenBootstrapServersAreSet() {
        EngramConfig c = from(Map.of(
                "ENGRAM_BOOTSTRAP_SERVERS", "kafka:9092",
                "ENGRAM_HTTP_PORT", "9000",
                "ENGRAM_ADVERTISED_HOST", "engram-1"));

        assertThat(c.kafka().embedded()).isFalse();
        assertThat(c.kafka().bootstrapServers()).isEqualTo("kafka:9092");
        assertThat(c.http().applicationServer()).isEqualTo("engram-1:9000");
    }

    @Test
    void readsTheLlmSettings() {
        EngramConfig c = from(Map.of(
                "ENGRAM_UNDERSTANDING", "llm",
                "ENGRAM_LLM_BASE_URL", "http://localhost:11434/v1",
                "ENGRAM_LLM_MODEL", "llama3.1:8b",
                "ENGRAM_LLM_PROMPT_PRICE_PER_MTOK", "0.5",
                "ENGRAM_LLM_COMPLETION_PRICE_PER_MTOK", "1.5"));

        assertThat(c.understanding().kind()).isEqualTo(EngramConfig.Understanding.Kind.LLM);
        assertThat(c.understanding().llm().model()).isEqualTo("llama3.1:8b");
        assertThat(c.understanding().llm().cost(1_000_000, 1_000_000)).isEqualTo(2.0);
        assertThat(c.understanding().llm().maxRetries()).isEqualTo(4);
        assertThat(c.understanding().llm().toString()).doesNotContain("sk-");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_UNDERSTANDING", "llm")))
                .hasMessageContaining("ENGRAM_LLM_BASE_URL");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_LLM_BASE_URL", "ftp://x", "ENGRAM_LLM_MODEL", "m")))
                .hasMessageContaining("ENGRAM_LLM_BASE_URL");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_LLM_BASE_URL", "http://x/v1")))
                .hasMessageContaining("ENGRAM_LLM_MODEL");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_UNDERSTANDING", "magic")))
                .hasMessageContaining("ENGRAM_UNDERSTANDING");
    }

    @Test
    void readsTheAgentConstructionSettings() {
        EngramConfig c = from(Map.of(
                "ENGRAM_CONSTRUCTION", "agent",
                "ENGRAM_LLM_BASE_URL", "http://localhost:11434/v1",
                "ENGRAM_LLM_MODEL", "qwen2.5:7b-instruct",
                "ENGRAM_AGENT_NAMESPACES", " wiki, news ,",
                "ENGRAM_AGENT_TOKENS_PER_HOUR", "50000",
                "ENGRAM_AGENT_API_KEY", "secret-reader-key"));

        EngramConfig.Agent agent = c.understanding().agent();
        assertThat(c.understanding().kind())
                .as("the base extractor")
                .isEqualTo(EngramConfig.Understanding.Kind.EMBEDDED);
        assertThat(agent.namespaces()).containsExactlyInAnyOrder("wiki", "news");
        assertThat(agent.constructs("wiki")).isTrue();
        assertThat(agent.constructs("other")).isFalse();
        assertThat(agent.tokensPerHour()).isEqualTo(50_000);
        assertThat(agent.maxRounds()).isEqualTo(12);
        assertThat(agent.transientAttempts()).isEqualTo(5);
        assertThat(agent.toString()).doesNotContain("secret");
        assertThat(from(Map.of()).understanding().agent()).as("off by default").isNull();
        assertThatThrownBy(() -> from(Map.of("ENGRAM_CONSTRUCTION", "agent")))
                .hasMessageContaining("ENGRAM_LLM_BASE_URL");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_CONSTRUCTION", "magic")))
                .hasMessageContaining("ENGRAM_CONSTRUCTION");
        assertThatThrownBy(() -> from(Map.of(
                        "ENGRAM_CONSTRUCTION", "agent",
                        "ENGRAM_LLM_BASE_URL", "http://x/v1",
                        "ENGRAM_LLM_MODEL", "m",
                        "ENGRAM_AGENT_NAMESPACES", "ok,../etc")))
                .hasMessageContaining("ENGRAM_AGENT_NAMESPACES");
        assertThatThrownBy(() -> UnderstanderFactory.create(
                        from(Map.of(
                                "ENGRAM_CONSTRUCTION", "agent",
                                "ENGRAM_LLM_BASE_URL", "http://x/v1",
                                "ENGRAM_LLM_MODEL", "m")),
                        Meters.detached()))
                .as("outside the service the agent would read no memory")
                .hasMessageContaining("runs in the service only");
    }

    @Test
    void theUnderstandingEmbedsMemoriesOnlyForAQdrantMirror() throws Exception {
        PassageEvent.Upsert p = new PassageEvent.Upsert(
                "ns",
                "d",
                1,
                "d#0",
                0,
                "h",
                "T",
                List.of(),
                "Ada Lovelace wrote notes. She died in London.",
                0,
                45,
                null,
                null);
        try (Understander plain = UnderstanderFactory.create(from(Map.of()), Meters.detached());
                Understander mirrored = UnderstanderFactory.create(
                        from(Map.of("ENGRAM_QDRANT_URL", "http://qdrant:6334")), Meters.detached())) {
            Extraction x = plain.extract(p);
            assertThat(x.memory()).isNotEqualTo(p.text());
            assertThat(plain.textsToEmbed(p, x).get(Understander.TextKind.MEMORY))
                    .as("no reader of the memory vector: not embedded")
                    .isEmpty();
            assertThat(mirrored.textsToEmbed(p, x).get(Understander.TextKind.MEMORY))
                    .as("the Qdrant mirror's memory collection reads it")
                    .containsExactly(x.memory());
        }
    }

    @Test
    void failsFastNamingTheBadSetting() {
        assertThatThrownBy(() -> from(Map.of("ENGRAM_PARTITIONS", "many")))
                .hasMessageContaining("ENGRAM_PARTITIONS")
                .hasMessageContaining("integer");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_HTTP_PORT", "70000"))).hasMessageContaining("ENGRAM_HTTP_PORT");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_EMBEDDED_KAFKA", "maybe")))
                .hasMessageContaining("ENGRAM_EMBEDDED_KAFKA");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_EMBEDDED_KAFKA", "false")))
                .hasMessageContaining("ENGRAM_BOOTSTRAP_SERVERS");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_APPLICATION_ID", "a b")))
                .hasMessageContaining("ENGRAM_APPLICATION_ID");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_ANN_MIN_VECTORS", "0")))
                .hasMessageContaining("ENGRAM_ANN_MIN_VECTORS");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_ANN_EF", "100000"))).hasMessageContaining("ENGRAM_ANN_EF");
    }

    @Test
    void readsTheVectorSearchSettings() {
        assertThat(from(Map.of()).query().vectorSearch())
                .isEqualTo(new VectorSearch(
                        20_000, 100, EngramHnswFormat.DEFAULT_MAX_CONN, EngramHnswFormat.DEFAULT_BEAM_WIDTH, true));
        assertThat(from(Map.of("ENGRAM_ANN_MIN_VECTORS", "10", "ENGRAM_ANN_EF", "40"))
                        .query()
                        .vectorSearch())
                .isEqualTo(new VectorSearch(
                        10, 40, EngramHnswFormat.DEFAULT_MAX_CONN, EngramHnswFormat.DEFAULT_BEAM_WIDTH, true));
        assertThat(from(Map.of()).query().vectorSearch())
                .isEqualTo(new VectorSearch(20_000, 100, 16, EngramHnswFormat.DEFAULT_BEAM_WIDTH, true));
        assertThat(from(Map.of("ENGRAM_ANN_M", "24", "ENGRAM_ANN_BEAM_WIDTH", "200"))
                        .query()
                        .vectorSearch())
                .isEqualTo(new VectorSearch(20_000, 100, 24, 200, true));
        assertThat(from(Map.of()).query().vectorSearch().backgroundWrites()).isTrue();
        assertThat(from(Map.of("ENGRAM_ANN_BACKGROUND_WRITES", "false"))
                        .query()
                        .vectorSearch()
                        .backgroundWrites())
                .isFalse();
        assertThatThrownBy(() -> from(Map.of("ENGRAM_ANN_M", "1"))).hasMessageContaining("ENGRAM_ANN_M");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_ANN_BEAM_WIDTH", "4000")))
                .hasMessageContaining("ENGRAM_ANN_BEAM_WIDTH");
        assertThat(from(Map.of()).query().vectorSearch().quantization()).isEqualTo(EngramHnswFormat.Quantization.NONE);
        assertThat(from(Map.of("ENGRAM_ANN_QUANTIZATION", "INT8"))
                        .query()
                        .vectorSearch()
                        .format())
                .isInstanceOf(EngramHnswFormat.Int8.class);
        assertThatThrownBy(() -> from(Map.of("ENGRAM_ANN_QUANTIZATION", "int2")))
                .hasMessageContaining("ENGRAM_ANN_QUANTIZATION");
    }

    @Test
    void evaluationRanksEachGoldDocumentAndCountsTheQuestionsAModeWinsAndLosesAgainstDense() {
        Set<String> gold = new LinkedHashSet<>(List.of("g1", "g2"));
        assertThat(EvalCommand.ranks(List.of("x", "g2", "y"), gold)).containsExactly(0, 2);

        List<int[]> dense = List.of(new int[] {1, 0}, new int[] {1, 2}, new int[] {6, 7}, new int[] {3});
        List<int[]> mode = List.of(new int[] {1, 4}, new int[] {1, 0}, new int[] {6, 8}, new int[] {2});

        // question 1 gains its second gold document within 5, question 2 loses one; 3 and 4 stay as they were
        assertThat(EvalCommand.wonLost(mode, dense)).containsExactly(1, 1);
    }

    @Test
    void evaluationOverSeveralSetsReportsEachModesGainOverDenseAndItsWorstSet() {
        List<Map<String, Object>> sets = List.of(
                Map.of(
                        "dataset",
                        "a",
                        "modes",
                        Map.of(
                                "dense", Map.of("recall@5", 60.0),
                                "hybrid", Map.of("recall@5", 66.0))),
                Map.of(
                        "dataset",
                        "b",
                        "modes",
                        Map.of(
                                "dense", Map.of("recall@5", 80.0),
                                "hybrid", Map.of("recall@5", 79.0))));

        Map<String, Object> summary = EvalCommand.summary(sets);

        assertThat(summary).containsOnlyKeys("dense", "hybrid");
        @SuppressWarnings("unchecked")
        Map<String, Object> hybrid = (Map<String, Object>) summary.get("hybrid");
        assertThat(hybrid.get("gain_r5_over_dense")).isEqualTo(Map.of("a", 6.0, "b", -1.0));
        assertThat(hybrid.get("worst_gain_r5")).isEqualTo(-1.0);
        assertThat(hybrid.get("worst_set")).isEqualTo("b");
        // without dense there is nothing to compare with
        assertThat(EvalCommand.summary(
                        List.of(Map.of("dataset", "a", "modes", Map.of("bm25", Map.of("recall@5", 1.0))))))
                .isEmpty();
    }

    @Test
    void passesKafkaClientSettingsThroughAndKeepsTheirSecrets() {
        EngramConfig c = from(Map.of(
                "ENGRAM_BOOTSTRAP_SERVERS", "kafka:9093",
                "ENGRAM_KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
                "ENGRAM_KAFKA_SASL_JAAS_CONFIG", "x required password=\"hunter2\";",
                "ENGRAM_KAFKA_SSL_TRUSTSTORE_PASSWORD", "hunter3"));

        assertThat(c.kafka().clientConfig())
                .containsEntry("bootstrap.servers", "kafka:9093")
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("ssl.truststore.password", "hunter3")
                .containsKey("sasl.jaas.config");
        assertThat(c.toString()).doesNotContain("hunter2").doesNotContain("hunter3");
        assertThat(KafkaSetup.streamsProperties(c, "app", 1))
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("processing.guarantee", "exactly_once_v2");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_KAFKA_PROCESSING_GUARANTEE", "at_least_once")))
                .hasMessageContaining("ENGRAM_KAFKA_PROCESSING_GUARANTEE");
        assertThatThrownBy(() -> from(Map.of("ENGRAM_KAFKA_ENABLE_IDEMPOTENCE", "false")))
                .hasMessageContaining("enable.idempotence");
    }
}
