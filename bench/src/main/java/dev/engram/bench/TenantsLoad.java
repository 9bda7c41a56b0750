package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.cli.Corpus;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
 * Two tenants on one instance: does one that floods {@code /answer} leave the other's retrievals as fast as when it
 * is alone? Both namespaces hold the same documents. After a warm-up, the quiet tenant's clients retrieve for a
 * while alone, then while the flooding tenant's clients send answers as fast as they come back (far more than the
 * LLM's permits, and waiting the second a 429's Retry-After asks, as an LLM API's client does), then alone again. The LLM is a loopback stand-in that answers every chat completion after a fixed delay, as a remote model
 * would: no real one runs here. Reported: the quiet tenant's p50/p99 in each phase and the ratio of its p99 beside the
 * flood to its p99 alone (goal ≤ 2), its
 * errors, and what became of the flood's requests (answered, refused with 429). Not a test: nothing is asserted.
 *
 * <p>Usage: {@code ./engram bench load --tenants true [--data DIR] [--docs 200] [--seconds 60] [--clients 2]
 * [--flood 200] [--llm-ms 300] [--out FILE]}.
 */
final class TenantsLoad {

    private static final String QUIET = "quiet";
    private static final String FLOOD = "flood";

    private TenantsLoad() {}

    static void run(Map<String, String> opts) throws Exception {
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/musique-train100"));
        int docs = Integer.parseInt(opts.getOrDefault("--docs", "200"));
        Duration phase = Duration.ofSeconds(Long.parseLong(opts.getOrDefault("--seconds", "60")));
        int clients = Integer.parseInt(opts.getOrDefault("--clients", "2"));
        int flood = Integer.parseInt(opts.getOrDefault("--flood", "200"));
        long llmMillis = Long.parseLong(opts.getOrDefault("--llm-ms", "300"));
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), docs);
        List<String> questions = LoadBenchmark.questions(data, corpus);

        AtomicLong llmCalls = new AtomicLong();
        // The JDK's HTTP server reads this once, when the first server of the process starts: the stand-in starts
        // before the API, which would otherwise be left without TCP_NODELAY (its replies held ~40 ms by Nagle's
        // algorithm against the client's delayed acknowledgments).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer llm = standInLlm(llmMillis, llmCalls);
        Map<String, String> env = Map.of(
                "ENGRAM_LLM_BASE_URL",
                "http://127.0.0.1:" + llm.getAddress().getPort() + "/v1",
                "ENGRAM_LLM_MODEL",
                "stand-in");
        try {
            LoadBenchmark.withService(
                    "engram-tenants",
                    opts.getOrDefault("--port", "18082"),
                    env,
                    (service, broker, config) -> measure(
                            service,
                            broker,
                            config,
                            corpus,
                            questions,
                            phase,
                            clients,
                            flood,
                            llmMillis,
                            llmCalls,
                            opts.get("--out")));
        } finally {
            llm.stop(0);
        }
    }

    private static void measure(
            EngramService service,
            EmbeddedKafkaBroker broker,
            EngramConfig config,
            List<JsonNode> corpus,
            List<String> questions,
            Duration phase,
            int clients,
            int flood,
            long llmMillis,
            AtomicLong llmCalls,
            String out)
            throws Exception {
        String base = "http://127.0.0.1:" + service.httpPort();
        // HTTP/1.1: the API speaks nothing else, so no connection tries an upgrade first
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
        try (KafkaProducer<String, byte[]> producer = Corpus.producer(broker.bootstrapServers())) {
            for (JsonNode d : corpus) {
                Corpus.send(producer, service.topics().documents().name(), QUIET, d);
                Corpus.send(producer, service.topics().documents().name(), FLOOD, d);
            }
            producer.flush();
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(15);
        while ((verified(http, base, QUIET) < corpus.size() || verified(http, base, FLOOD) < corpus.size())
                && System.nanoTime() < deadline) {
            TimeUnit.SECONDS.sleep(2);
        }
        System.out.printf("ingested %d documents into each namespace%n", corpus.size());
        // each quiet client its own connection, sending a request in one write (see OneWriteClient)
        OneWriteClient[] quietClients = new OneWriteClient[clients];
        for (int c = 0; c < clients; c++) {
            quietClients[c] = new OneWriteClient("127.0.0.1", service.httpPort());
        }
        // memory goes on after the documents are verified (gists, themes): wait until neither namespace's
        // version moves for ten seconds, so that the quiet phase before the flood is as settled as after it
        String before = versions(http, base);
        long settleBy = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        for (int still = 0; still < 2 && System.nanoTime() < settleBy; ) {
            TimeUnit.SECONDS.sleep(5);
            String now = versions(http, base);
            still = now.equals(before) ? still + 1 : 0;
            before = now;
        }
        System.out.println("memory settled at versions " + before);

        // the first queries build the namespaces' snapshots and warm the JIT, and the vector indexes settle
        // after ingest: rounds of ten seconds, not measured, until two in a row answer as fast
        double previous = Double.MAX_VALUE;
        for (int round = 0; round < 18; round++) {
            Phase warmup = quiet(quietClients, questions, Duration.ofSeconds(10));
            double p50 = LoadBenchmark.percentile(warmup.micros(), 0.5) / 1000.0;
            System.out.println("warm-up: " + Json.toString(warmup.summary()));
            if (round >= 2 && p50 <= 1.2 * previous && previous <= 1.2 * p50) {
                break;
            }
            previous = p50;
        }
        Phase alone = quiet(quietClients, questions, phase);
        System.out.println("quiet alone: " + Json.toString(alone.summary()));
        AtomicBoolean flooding = new AtomicBoolean(true);
        Map<Integer, AtomicLong> floodStatus = new ConcurrentHashMap<>();
        ExecutorService flooders = Executors.newVirtualThreadPerTaskExecutor();
        for (int c = 0; c < flood; c++) {
            int client = c;
            flooders.execute(() -> {
                for (int i = client; flooding.get(); i += flood) {
                    String body = Json.toString(Map.of("query", questions.get(i % questions.size()), "top_k", 5));
                    int status = LoadBenchmark.post(
                            http, base + "/v1/namespaces/" + FLOOD + "/answer", body, Duration.ofSeconds(120));
                    floodStatus.computeIfAbsent(status, k -> new AtomicLong()).incrementAndGet();
                    if (status == 429) {
                        sleep(Duration.ofSeconds(1)); // as clients of LLM APIs do: they honour Retry-After
                    }
                }
            });
        }
        TimeUnit.SECONDS.sleep(5); // the flood reaches its steady state
        long llmBefore = llmCalls.get();
        Phase busy = quiet(quietClients, questions, phase);
        long llmDuring = llmCalls.get() - llmBefore;
        flooding.set(false);
        flooders.shutdown();
        flooders.awaitTermination(2, TimeUnit.MINUTES);
        System.out.println("quiet beside the flood: " + Json.toString(busy.summary()));
        Phase after = quiet(quietClients, questions, phase);
        System.out.println("quiet alone again: " + Json.toString(after.summary()));

        Map<String, Object> result = new LinkedHashMap<>();
        result.put("documents_per_namespace", corpus.size());
        result.put("quiet_clients", clients);
        result.put("flood_clients", flood);
        result.put("llm_delay_ms", llmMillis);
        result.put("llm_concurrency", config.understanding().llm().concurrency());
        result.put("max_in_flight", config.http().maxInFlight());
        result.put("max_in_flight_per_namespace", config.http().maxInFlightPerNamespace());
        result.put("quiet_alone", alone.summary());
        result.put("quiet_beside_flood", busy.summary());
        result.put("quiet_alone_again", after.summary());
        // against the faster of the two quiet phases around the flood (the stricter), and the slower
        result.put("p99_ratio", busy.p99() / Math.max(1e-9, Math.min(alone.p99(), after.p99())));
        result.put("p99_ratio_to_slower_quiet", busy.p99() / Math.max(1e-9, Math.max(alone.p99(), after.p99())));
        result.put("flood_by_status", floodStatus);
        result.put("llm_calls_during_phase", llmDuring);
        System.out.println(Json.toString(result));
        if (out != null) {
            Files.write(Path.of(out), Json.toBytes(result));
        }
    }

    /** One phase of the quiet tenant: latencies of its answered retrievals, and the statuses of all. */
    private record Phase(List<Long> micros, Map<Integer, Long> statuses, double seconds) {
        double p99() {
            return LoadBenchmark.percentile(micros, 0.99) / 1000.0;
        }

        Map<String, Object> summary() {
            Map<String, Object> s = new LinkedHashMap<>();
            long all = statuses.values().stream().mapToLong(Long::longValue).sum();
            s.put("queries", all);
            s.put("answered_per_s", micros.size() / seconds);
            s.put("refused_share", all == 0 ? 0 : (double) statuses.getOrDefault(429, 0L) / all);
            s.put("latency_ms_p50", LoadBenchmark.percentile(micros, 0.50) / 1000.0);
            s.put("latency_ms_p99", p99());
            s.put("by_status", statuses);
            return s;
        }
    }

    private static Phase quiet(OneWriteClient[] quiet, List<String> questions, Duration length)
            throws InterruptedException {
        int clients = quiet.length;
        List<Long> micros = Collections.synchronizedList(new ArrayList<>());
        Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
        long end = System.nanoTime() + length.toNanos();
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        for (int c = 0; c < clients; c++) {
            int client = c;
            pool.execute(() -> {
                for (int i = client; System.nanoTime() < end; i += clients) {
                    String body = Json.toString(Map.of("query", questions.get(i % questions.size()), "top_k", 5));
                    long s = System.nanoTime();
                    int status = quiet[client].post("/v1/namespaces/" + QUIET + "/retrieve", body);
                    if (status == 200) {
                        micros.add((System.nanoTime() - s) / 1000); // a refusal is quick, and no retrieval
                    }
                    statuses.computeIfAbsent(status, k -> new AtomicLong()).incrementAndGet();
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(length.toSeconds() + 60, TimeUnit.SECONDS);
        List<Long> sorted = new ArrayList<>(micros);
        Collections.sort(sorted);
        Map<Integer, Long> counted = new LinkedHashMap<>();
        statuses.forEach((k, v) -> counted.put(k, v.get()));
        return new Phase(sorted, counted, (System.nanoTime() - t0) / 1e9);
    }

    /**
     * An OpenAI-compatible stand-in that answers every chat completion after {@code delayMillis}: a decomposition
     * that does not split, an answer citing the first passage.
     */
    private static HttpServer standInLlm(long delayMillis, AtomicLong calls) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/chat/completions", exchange -> {
            try (exchange) {
                calls.incrementAndGet();
                String request;
                try (InputStream in = exchange.getRequestBody()) {
                    request = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                sleep(Duration.ofMillis(delayMillis));
                String content = request.contains("\"decomposition\"")
                        ? "{\"split\": false, \"sub_questions\": []}"
                        : "{\"answer\": \"An answer from the stand-in [1].\", \"citations\": [1]}";
                reply(
                        exchange,
                        Json.toString(Map.of(
                                "choices",
                                List.of(Map.of("message", Map.of("role", "assistant", "content", content))),
                                "usage",
                                Map.of("prompt_tokens", 100, "completion_tokens", 10))));
            }
        });
        server.start();
        return server;
    }

    private static void reply(HttpExchange exchange, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long verified(HttpClient http, String base, String ns) {
        return LoadBenchmark.namespace(http, base, ns)
                .path("documents_by_status")
                .path("VERIFIED")
                .asLong();
    }

    /** Both namespaces' memory versions, as one string. */
    private static String versions(HttpClient http, String base) {
        StringBuilder out = new StringBuilder();
        for (String ns : List.of(QUIET, FLOOD)) {
            out.append(ns)
                    .append('=')
                    .append(LoadBenchmark.namespace(http, base, ns)
                            .path("watermark")
                            .path("version")
                            .asLong())
                    .append(' ');
        }
        return out.toString().strip();
    }
}
