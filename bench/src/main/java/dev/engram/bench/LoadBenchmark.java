package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.app.UnderstanderFactory;
import dev.engram.service.cli.Corpus;
import dev.engram.understanding.Understander;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * A load run on loopback, bounded in time: documents are produced at a steady rate while concurrent clients query the
 * namespace, for a few minutes; then production stops and the run waits for ingest to catch up. It reports the load
 * held (documents/s in, queries/s out), the errors (any answer but 200, and 404 before the namespace exists), query
 * latency, heap and RSS sampled over time, and how long the backlog took to clear. Not a test: nothing is asserted.
 *
 * <p>Usage: {@code LoadBenchmark [--data DIR] [--minutes 3] [--clients 4] [--docs-per-second 2] [--mode MODE] [--out
 * FILE]}.
 */
public final class LoadBenchmark {

    private static final String NS = "load";

    private LoadBenchmark() {}

    private record Sample(
            double seconds, long heapUsedMb, long rssMb, long produced, long verified, long queries, long errors) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse(
                "load",
                args,
                "--clients",
                "--data",
                "--docs",
                "--docs-per-second",
                "--flood",
                "--llm-ms",
                "--minutes",
                "--mode",
                "--out",
                "--port",
                "--seconds",
                "--tenants");
        if (Boolean.parseBoolean(opts.getOrDefault("--tenants", "false"))) {
            if (opts.containsKey("--mode")) {
                throw new BenchOptions.Exit(2, "engram bench load: --mode is not taken with --tenants true");
            }
            TenantsLoad.run(opts);
            return;
        }
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/musique-train100"));
        Duration length = Duration.ofSeconds((long) (60 * Double.parseDouble(opts.getOrDefault("--minutes", "3"))));
        int clients = Integer.parseInt(opts.getOrDefault("--clients", "4"));
        double docsPerSecond = Double.parseDouble(opts.getOrDefault("--docs-per-second", "2"));
        // the retrieval mode the clients ask for; none: the service's default
        String mode = opts.get("--mode");
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), Integer.MAX_VALUE);
        List<String> questions = questions(data, corpus);

        withService(
                "engram-load",
                opts.getOrDefault("--port", "18081"),
                Map.of(),
                (service, broker, config) -> run(
                        service, broker, corpus, questions, length, clients, docsPerSecond, mode, opts.get("--out")));
    }

    /** What runs against a started instance. */
    @FunctionalInterface
    interface Run {
        void run(EngramService service, EmbeddedKafkaBroker broker, EngramConfig config) throws Exception;
    }

    /**
     * Starts an embedded broker and one instance on loopback (state in a new temporary directory, the environment's
     * settings with {@code env} over them), runs {@code run} once it serves, and stops both.
     */
    static void withService(String applicationId, String port, Map<String, String> env, Run run) throws Exception {
        Map<String, String> settings = new HashMap<>(System.getenv());
        settings.put(
                "ENGRAM_STATE_DIR",
                Files.createTempDirectory(applicationId + "-").toString());
        settings.put("ENGRAM_APPLICATION_ID", applicationId);
        settings.put("ENGRAM_HTTP_PORT", port);
        settings.putAll(env);
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander =
                        UnderstanderFactory.create(EngramConfig.local(settings), Meters.detached())) {
            settings.put("ENGRAM_BOOTSTRAP_SERVERS", broker.bootstrapServers());
            EngramConfig config = EngramConfig.local(settings);
            try (EngramService service = EngramService.start(config, understander)) {
                if (!service.awaitRunning(Duration.ofMinutes(2))) {
                    throw new IllegalStateException("service did not start");
                }
                run.run(service, broker, config);
            }
        }
    }

    private static void run(
            EngramService service,
            EmbeddedKafkaBroker broker,
            List<JsonNode> corpus,
            List<String> questions,
            Duration length,
            int clients,
            double docsPerSecond,
            String mode,
            String out)
            throws Exception {
        String base = "http://127.0.0.1:" + service.httpPort();
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong produced = new AtomicLong();
        AtomicLong queries = new AtomicLong();
        AtomicLong notYet = new AtomicLong();
        Map<Integer, AtomicLong> errors = new ConcurrentHashMap<>();
        List<Long> latenciesMicros = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(clients + 1);
        long t0 = System.nanoTime();

        pool.execute(() -> {
            long intervalNanos = (long) (1e9 / docsPerSecond);
            try (KafkaProducer<String, byte[]> producer = Corpus.producer(broker.bootstrapServers())) {
                for (int i = 0; running.get() && i < corpus.size(); i++) {
                    Corpus.send(producer, service.topics().documents().name(), NS, corpus.get(i));
                    producer.flush();
                    produced.incrementAndGet();
                    sleepUntil(t0 + (i + 1) * intervalNanos, running);
                }
            }
        });
        for (int c = 0; c < clients; c++) {
            int client = c;
            pool.execute(() -> {
                for (int i = client; running.get(); i += clients) {
                    String q = questions.get(i % questions.size());
                    String body = Json.toString(
                            mode == null
                                    ? Map.of("query", q, "top_k", 5)
                                    : Map.of("query", q, "top_k", 5, "mode", mode));
                    long s = System.nanoTime();
                    int status = post(http, base + "/v1/namespaces/" + NS + "/retrieve", body);
                    latenciesMicros.add((System.nanoTime() - s) / 1000);
                    queries.incrementAndGet();
                    if (status == 404 && verified(http, base) == 0) {
                        notYet.incrementAndGet(); // the namespace has no memory yet
                    } else if (status != 200) {
                        errors.computeIfAbsent(status, k -> new AtomicLong()).incrementAndGet();
                    }
                }
            });
        }

        List<Sample> samples = new ArrayList<>();
        long end = t0 + length.toNanos();
        while (System.nanoTime() < end) {
            TimeUnit.SECONDS.sleep(5);
            samples.add(sample(t0, produced.get(), verified(http, base), queries.get(), total(errors)));
            Sample last = samples.get(samples.size() - 1);
            System.out.printf(
                    "%6.0f s  heap %5d MB  rss %5d MB  produced %5d  verified %5d  queries %7d  errors %d%n",
                    last.seconds(),
                    last.heapUsedMb(),
                    last.rssMb(),
                    last.produced(),
                    last.verified(),
                    last.queries(),
                    last.errors());
        }
        running.set(false);
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        double loadSeconds = (System.nanoTime() - t0) / 1e9;

        // the backlog: how long ingest takes to catch up once production stops
        long stop = System.nanoTime();
        long recoveryDeadline = stop + TimeUnit.MINUTES.toNanos(10);
        while (verified(http, base) < produced.get() && System.nanoTime() < recoveryDeadline) {
            TimeUnit.MILLISECONDS.sleep(500);
        }
        double recoverySeconds = (System.nanoTime() - stop) / 1e9;
        boolean recovered = verified(http, base) >= produced.get();

        List<Long> sorted = new ArrayList<>(latenciesMicros);
        Collections.sort(sorted);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("seconds", loadSeconds);
        result.put("clients", clients);
        result.put("mode", mode == null ? "default" : mode);
        result.put("documents_produced", produced.get());
        result.put("documents_per_s", produced.get() / loadSeconds);
        result.put("queries", queries.get());
        result.put("queries_per_s", queries.get() / loadSeconds);
        result.put("queries_before_memory", notYet.get());
        result.put("errors", total(errors));
        result.put("errors_by_status", errors);
        result.put("latency_ms_p50", percentile(sorted, 0.50) / 1000.0);
        result.put("latency_ms_p99", percentile(sorted, 0.99) / 1000.0);
        result.put("backlog_recovered", recovered);
        result.put("backlog_recovery_s", recoverySeconds);
        result.put(
                "heap_used_mb_max",
                samples.stream().mapToLong(Sample::heapUsedMb).max().orElse(0));
        result.put("rss_mb_max", samples.stream().mapToLong(Sample::rssMb).max().orElse(0));
        result.put("samples", samples);
        System.out.println(Json.toString(withoutSamples(result)));
        if (out != null) {
            Files.write(Path.of(out), Json.toBytes(result));
        }
    }

    private static Map<String, Object> withoutSamples(Map<String, Object> result) {
        Map<String, Object> shown = new LinkedHashMap<>(result);
        shown.remove("samples");
        return shown;
    }

    private static Sample sample(long t0, long produced, long verified, long queries, long errors) {
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        return new Sample((System.nanoTime() - t0) / 1e9, heap >> 20, rssMb(), produced, verified, queries, errors);
    }

    /** Resident set size from /proc (Linux), or -1 elsewhere. */
    private static long rssMb() {
        try {
            return ProcessFootprint.status().getOrDefault("VmRSS", -1L << 20) >> 20;
        } catch (IOException e) {
            return -1;
        }
    }

    private static long total(Map<Integer, AtomicLong> errors) {
        return errors.values().stream().mapToLong(AtomicLong::get).sum();
    }

    static long percentile(List<Long> sorted, double q) {
        return sorted.isEmpty() ? 0 : sorted.get((int) Math.min(sorted.size() - 1, Math.floor(q * sorted.size())));
    }

    private static int post(HttpClient http, String url, String body) {
        return post(http, url, body, Duration.ofSeconds(30));
    }

    /** POSTs a JSON body; the status, or 599 when no answer came. */
    static int post(HttpClient http, String url, String body, Duration timeout) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .timeout(timeout)
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return 599; // no answer at all
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 599;
        }
    }

    /** Documents of the namespace that are VERIFIED (0 before it has memory). */
    private static long verified(HttpClient http, String base) {
        return namespace(http, base, NS)
                .path("documents_by_status")
                .path("VERIFIED")
                .asLong();
    }

    /** {@code GET /v1/namespaces/{ns}}: its counts and watermark, or a missing node before it has memory. */
    static JsonNode namespace(HttpClient http, String base, String ns) {
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + ns))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? Json.mapper().readTree(r.body()) : MissingNode.getInstance();
        } catch (IOException e) {
            return MissingNode.getInstance();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return MissingNode.getInstance();
        }
    }

    private static void sleepUntil(long deadlineNanos, AtomicBoolean running) {
        long wait = deadlineNanos - System.nanoTime();
        while (wait > 0 && running.get()) {
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(200)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            wait = deadlineNanos - System.nanoTime();
        }
    }

    /** The set's questions, or the corpus titles as questions when it has none. */
    static List<String> questions(Path data, List<JsonNode> corpus) throws IOException {
        List<String> out = new ArrayList<>();
        Path file = data.resolve("questions.jsonl");
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    out.add(Json.mapper().readTree(line).path("question").asText());
                }
            }
        }
        if (out.isEmpty()) {
            corpus.forEach(d -> out.add("What is " + d.path("title").asText() + "?"));
        }
        return out;
    }
}
