package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.app.UnderstanderFactory;
import dev.engram.service.cli.Corpus;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.Embedder;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ingest throughput, as ratios in one run: passages/s through the whole pipeline (embedded broker, read, understand,
 * construct, exactly-once) versus the embedder alone on exactly the texts the understanding embeds, with as many
 * threads as the ingest application has stream threads — the physical limit of the embedded understanding on this
 * machine.
 *
 * <p>Usage: {@code IngestBenchmark --data DIR [--limit N] [--warmup N] [--instances N] [--out FILE]} where DIR holds
 * {@code corpus.jsonl}: the first {@code --limit} documents are timed, after the next {@code --warmup} (200) went
 * through the same service in a namespace of their own, so that the pipeline is timed compiled, as the embedder is.
 * With {@code --instances} (1) instances of one application share the work on one broker, in this process; the
 * embedder's limit is then measured on all their ingest threads. Where the CPU went during the timed phase, by kind of
 * thread ({@link CpuShares}), shows what the pipeline spends beside the embedder.
 */
public final class IngestBenchmark {

    private IngestBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts =
                BenchOptions.parse("ingest", args, "--data", "--instances", "--limit", "--out", "--port", "--warmup");
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/2wiki-corpus"));
        int limit = Integer.parseInt(opts.getOrDefault("--limit", "2000"));
        int warmup = Integer.parseInt(opts.getOrDefault("--warmup", "200"));
        int instances = Integer.parseInt(opts.getOrDefault("--instances", "1"));
        if (instances < 1) {
            throw new IllegalArgumentException("--instances must be at least 1, got " + instances);
        }
        // the documents after the measured ones warm the pipeline up (JIT) in a namespace of their own
        List<JsonNode> read = Corpus.read(data.resolve("corpus.jsonl"), limit + warmup);
        List<JsonNode> corpus = read.subList(0, Math.min(limit, read.size()));
        List<JsonNode> warming = read.subList(corpus.size(), read.size());
        EngramConfig defaults = EngramConfig.local(System.getenv());
        Chunker chunker = new Chunker(defaults.ingest().chunkMaxTokens());
        // the limit is held to as many threads as the ingest applications of all instances have
        int threads = defaults.kafka().ingestThreads() * instances;

        List<PassageEvent.Upsert> passages = new ArrayList<>();
        for (JsonNode doc : corpus) {
            for (Chunker.Chunk c : chunker.chunk(doc.path("text").asText())) {
                passages.add(new PassageEvent.Upsert(
                        "bench",
                        doc.path("doc_id").asText(),
                        1,
                        "",
                        passages.size(),
                        "",
                        doc.path("title").asText(),
                        c.headings(),
                        c.text(),
                        c.start(),
                        c.end(),
                        null,
                        null));
            }
        }
        System.out.printf(
                "corpus: %d documents, %d passages (%s); %d instance(s), %d ingest threads in all%n",
                corpus.size(), passages.size(), data, instances, threads);

        double limitRate;
        double passagesOnlyRate;
        double textsPerPassage;
        try (Understander understander = UnderstanderFactory.create(defaults, Meters.detached())) {
            List<String> texts = new ArrayList<>();
            List<String> passageTexts = new ArrayList<>();
            for (PassageEvent.Upsert p : passages) {
                Extraction x = understander.extract(p);
                passageTexts.add(Understander.embeddingText(p));
                texts.addAll(UnderstandBenchmark.textsToEmbed(understander, p, x));
            }
            textsPerPassage = (double) texts.size() / passages.size();
            Embedder embedder = understander.embedder();
            texts.stream().limit(500).forEach(embedder::embed); // warm-up
            // the best of two runs: a shared machine's drift must not lower the limit the pipeline is held to
            limitRate = passages.size()
                    / Math.min(embedSeconds(embedder, texts, threads), embedSeconds(embedder, texts, threads));
            passagesOnlyRate = passages.size() / embedSeconds(embedder, passageTexts, threads);
        }
        System.out.printf(
                "embedder alone, %d threads, the understanding's %.1f texts per passage: %.1f passages/s%n",
                threads, textsPerPassage, limitRate);
        System.out.printf("embedder alone, %d threads, passages only: %.1f passages/s%n", threads, passagesOnlyRate);

        Run run;
        CpuShares cpu = new CpuShares();
        Map<String, Double> shares;
        Path state = Files.createTempDirectory("engram-bench-");
        int port = Integer.parseInt(opts.getOrDefault("--port", "18080"));
        List<EngramService> services = new ArrayList<>();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander = UnderstanderFactory.create(defaults, Meters.detached())) {
            try {
                // instances of one application share its partitions; the first one's API routes to the owners
                for (int i = 0; i < instances; i++) {
                    services.add(start(
                            broker,
                            state.resolve("instance-" + i),
                            String.valueOf(port + i),
                            "engram-bench",
                            understander));
                }
                EngramService service = services.get(0);
                String base = "http://localhost:" + service.httpPort();
                if (!warming.isEmpty()) {
                    long w0 = System.nanoTime();
                    Corpus.produce(
                            broker.bootstrapServers(),
                            service.topics().documents().name(),
                            "warmup",
                            warming);
                    Run warm = follow(base, "warmup", warming.size(), w0, Duration.ofMinutes(60));
                    System.out.printf(
                            "warm-up: %d documents, %d passages, %.1f passages/s%n",
                            warming.size(), warm.passages(), warm.rate());
                }
                cpu.start();
                long t0 = System.nanoTime();
                Corpus.produce(
                        broker.bootstrapServers(), service.topics().documents().name(), "bench", corpus);
                run = follow(base, "bench", corpus.size(), t0, Duration.ofMinutes(60));
                shares = cpu.since();
            } finally {
                for (EngramService s : services) {
                    s.close();
                }
            }
        }
        System.out.printf(
                "pipeline: %.1f passages/s (%d passages), %.1f passages/s over the second half%n",
                run.rate(), run.passages(), run.secondHalfRate());
        System.out.printf(
                "ingest / embedder limit: %.2f (second half %.2f)%n",
                run.rate() / limitRate, run.secondHalfRate() / limitRate);
        System.out.printf(
                "CPU of the timed phase, %.2f cores: understand %.0f %%, memory %.0f %%, broker %.0f %%, Kafka clients"
                        + " %.0f %%, other Java threads %.0f %%, JIT, GC and native threads %.0f %% (%.0f s compiling)%n",
                shares.get("cores"),
                100 * shares.get("understand"),
                100 * shares.get("memory"),
                100 * shares.get("broker"),
                100 * shares.get("clients"),
                100 * shares.get("other"),
                100 * shares.get("jvm_and_native"),
                shares.get("compilation_seconds"));

        Map<String, Object> result = new LinkedHashMap<>();
        result.put("dataset", data.getFileName().toString());
        result.put("documents", corpus.size());
        result.put("warmup_documents", warming.size());
        result.put("passages", run.passages());
        result.put("instances", instances);
        result.put("ingest_threads", threads);
        result.put("embedder", defaults.understanding().embedder().id());
        result.put("texts_per_passage", textsPerPassage);
        result.put("ingest_passages_per_s", run.rate());
        result.put("ingest_second_half_passages_per_s", run.secondHalfRate());
        result.put("embedder_limit_per_s", limitRate);
        result.put("embedder_passages_only_per_s", passagesOnlyRate);
        result.put("ingest_vs_limit", run.rate() / limitRate);
        result.put("ingest_second_half_vs_limit", run.secondHalfRate() / limitRate);
        result.put("cpu_shares", shares);
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(result));
        }
    }

    /** Seconds to embed {@code texts} one by one on {@code threads} threads sharing the embedder. */
    private static double embedSeconds(Embedder embedder, List<String> texts, int threads) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> running = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                running.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < texts.size(); i = next.getAndIncrement()) {
                        embedder.embed(texts.get(i));
                    }
                }));
            }
            for (Future<?> f : running) {
                f.get();
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            pool.shutdownNow();
        }
    }

    /** How an ingest went: passages in memory, seconds in all, and the rate once half of them were in. */
    record Run(long passages, double seconds, double secondHalfRate) {
        double rate() {
            return passages / seconds;
        }
    }

    /** Follows the namespace until {@code documents} are verified, sampling its passages as they come in. */
    static Run follow(String base, String ns, int documents, long t0, Duration timeout) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        List<long[]> samples = new ArrayList<>(); // {nanos since t0, passages}
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + ns))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            long now = System.nanoTime() - t0;
            if (r.statusCode() == 200) {
                JsonNode stats = Json.mapper().readTree(r.body());
                long passages = stats.path("passages").asLong();
                samples.add(new long[] {now, passages});
                if (stats.path("documents_by_status").path("VERIFIED").asInt() >= documents) {
                    long[] half = samples.stream()
                            .filter(s -> s[1] >= passages / 2)
                            .findFirst()
                            .orElseThrow();
                    // a corpus in memory by the first sample has no second half to time: its whole rate stands
                    double secondHalf = now > half[0] && passages > half[1]
                            ? (passages - half[1]) / ((now - half[0]) / 1e9)
                            : passages / (now / 1e9);
                    return new Run(passages, now / 1e9, secondHalf);
                }
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        throw new IllegalStateException("ingest did not finish within " + timeout);
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

    /** An instance of the environment's configuration on {@code broker}, running; its API on 127.0.0.1:port. */
    static EngramService start(
            EmbeddedKafkaBroker broker, Path state, String port, String applicationId, Understander understander)
            throws InterruptedException {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("ENGRAM_BOOTSTRAP_SERVERS", broker.bootstrapServers());
        env.put("ENGRAM_STATE_DIR", state.toString());
        env.put("ENGRAM_HTTP_PORT", port);
        env.put("ENGRAM_APPLICATION_ID", applicationId);
        EngramService service = EngramService.start(EngramConfig.local(env), understander);
        if (!service.awaitRunning(Duration.ofMinutes(2))) {
            service.close();
            throw new IllegalStateException("service did not start");
        }
        return service;
    }
}
