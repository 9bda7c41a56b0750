package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.service.Corpus;
import dev.engram.service.EmbeddedKafkaBroker;
import dev.engram.service.EngramConfig;
import dev.engram.service.EngramService;
import dev.engram.service.UnderstanderFactory;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.Understander;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ingest throughput, as a ratio in one run: passages/s through the whole pipeline (embedded broker, read, understand,
 * construct, exactly-once) versus passages/s of the embedder alone on the same passage texts — the physical limit of
 * the embedded understanding on this machine.
 *
 * <p>Usage: {@code IngestBenchmark --data DIR [--limit N] [--out FILE]} where DIR holds {@code corpus.jsonl}.
 */
public final class IngestBenchmark {

    private IngestBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = options(args);
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/2wiki-corpus"));
        int limit = Integer.parseInt(opts.getOrDefault("--limit", "2000"));
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), limit);
        EngramConfig defaults = EngramConfig.local(System.getenv());
        Chunker chunker = new Chunker(defaults.ingest().chunkMaxTokens());

        List<String> texts = new ArrayList<>();
        for (JsonNode doc : corpus) {
            for (Chunker.Chunk c : chunker.chunk(doc.path("text").asText())) {
                texts.add(Understander.embeddingText(new PassageEvent.Upsert(
                        "bench",
                        "d",
                        1,
                        "",
                        0,
                        "",
                        doc.path("title").asText(),
                        c.headings(),
                        c.text(),
                        c.start(),
                        c.end(),
                        null,
                        null)));
            }
        }
        System.out.printf("corpus: %d documents, %d passages (%s)%n", corpus.size(), texts.size(), data);

        double embedderRate;
        try (OnnxEmbedder embedder = OnnxEmbedder.allMiniLmL6V2(
                defaults.understanding().embedMaxTokens(),
                defaults.understanding().embedThreads())) {
            texts.stream().limit(50).forEach(embedder::embed);
            long t0 = System.nanoTime();
            texts.forEach(embedder::embed);
            embedderRate = texts.size() / ((System.nanoTime() - t0) / 1e9);
        }
        System.out.printf("embedder alone: %.1f passages/s%n", embedderRate);

        double pipelineRate;
        long pipelinePassages;
        Path state = Files.createTempDirectory("engram-bench-");
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander = UnderstanderFactory.create(defaults, Meters.detached())) {
            Map<String, String> env = new HashMap<>(System.getenv());
            env.put("ENGRAM_BOOTSTRAP_SERVERS", broker.bootstrapServers());
            env.put("ENGRAM_STATE_DIR", state.toString());
            env.put("ENGRAM_HTTP_PORT", opts.getOrDefault("--port", "18080"));
            env.put("ENGRAM_APPLICATION_ID", "engram-bench");
            EngramConfig config = EngramConfig.local(env);
            try (EngramService service = EngramService.start(config, understander)) {
                if (!service.awaitRunning(Duration.ofMinutes(2))) {
                    throw new IllegalStateException("service did not start");
                }
                String base = "http://localhost:" + service.httpPort();
                long t0 = System.nanoTime();
                Corpus.produce(
                        broker.bootstrapServers(), service.topics().documents().name(), "bench", corpus);
                JsonNode stats = awaitVerified(base, "bench", corpus.size(), Duration.ofMinutes(30));
                double seconds = (System.nanoTime() - t0) / 1e9;
                pipelinePassages = stats.path("passages").asLong();
                pipelineRate = pipelinePassages / seconds;
            }
        }
        System.out.printf("pipeline: %.1f passages/s (%d passages)%n", pipelineRate, pipelinePassages);
        System.out.printf("ratio pipeline / embedder alone: %.2f%n", pipelineRate / embedderRate);

        Map<String, Object> result = new LinkedHashMap<>();
        result.put("dataset", data.getFileName().toString());
        result.put("documents", corpus.size());
        result.put("passages", pipelinePassages);
        result.put("embedder_passages_per_s", embedderRate);
        result.put("pipeline_passages_per_s", pipelineRate);
        result.put("ratio", pipelineRate / embedderRate);
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(result));
        }
    }

    static JsonNode awaitVerified(String base, String ns, int documents, Duration timeout) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + ns))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                JsonNode stats = Json.mapper().readTree(r.body());
                if (stats.path("documents_by_status").path("VERIFIED").asInt() >= documents) {
                    return stats;
                }
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        throw new IllegalStateException("ingest did not finish within " + timeout);
    }

    static Map<String, String> options(String[] args) {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value pairs, got " + args[i]);
            }
            out.put(args[i], args[i + 1]);
        }
        return out;
    }
}
