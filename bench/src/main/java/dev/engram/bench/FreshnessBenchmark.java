package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.app.UnderstanderFactory;
import dev.engram.service.cli.Corpus;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;

/**
 * Freshness: how long a document takes from the moment the broker acknowledged it to the moment a retrieval can
 * return it, under a steady ingest rate.
 *
 * <ol>
 *   <li>The maximum rate: the first {@code --warmup} documents are produced at once and followed until all are in
 *       memory (documents/s end to end; this also warms the JIT up).
 *   <li>The next {@code --documents} are produced one at a time, evenly spaced at {@code --load} (0.5) times that
 *       rate. A watcher asks every {@code --poll-ms} (100) which documents are VERIFIED, with the namespace's memory
 *       version right after, and runs a retrieval: a document is <em>queryable</em> once a retrieval's snapshot
 *       ({@code watermark.graph_version}) is at least the version seen with its VERIFIED status.
 * </ol>
 *
 * <p>Freshness is queryable time minus acknowledged time; a watcher tick's delay makes it an upper bound by at most
 * one poll interval. Prints and writes ({@code --out}) one JSON object, and a PNG of the freshness of every document
 * against its send time ({@code --plot}).
 *
 * <p>Usage: {@code FreshnessBenchmark --data DIR [--warmup 150] [--documents 200] [--load 0.5] [--poll-ms 100]
 * [--out FILE] [--plot FILE]}.
 */
public final class FreshnessBenchmark {

    private static final String NS = "fresh";

    private FreshnessBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse(
                "freshness",
                args,
                "--data",
                "--documents",
                "--load",
                "--out",
                "--plot",
                "--poll-ms",
                "--port",
                "--warmup");
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/2wiki-corpus"));
        int warmup = Integer.parseInt(opts.getOrDefault("--warmup", "150"));
        int measured = Integer.parseInt(opts.getOrDefault("--documents", "200"));
        double load = Double.parseDouble(opts.getOrDefault("--load", "0.5"));
        long pollMs = Long.parseLong(opts.getOrDefault("--poll-ms", "100"));
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), warmup + measured);
        if (corpus.size() < warmup + measured) {
            throw new IllegalArgumentException("the corpus has " + corpus.size() + " documents, fewer than --warmup "
                    + warmup + " plus --documents " + measured);
        }
        EngramConfig defaults = EngramConfig.local(System.getenv());
        Path state = Files.createTempDirectory("engram-fresh-");
        Map<String, Object> result = new LinkedHashMap<>();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander = UnderstanderFactory.create(defaults, Meters.detached())) {
            try (EngramService service = IngestBenchmark.start(
                            broker, state, opts.getOrDefault("--port", "18081"), "engram-fresh", understander);
                    KafkaProducer<String, byte[]> producer = Corpus.producer(broker.bootstrapServers())) {
                String base = "http://localhost:" + service.httpPort();
                String topic = service.topics().documents().name();

                long t0 = System.nanoTime();
                Corpus.produce(broker.bootstrapServers(), topic, NS, corpus.subList(0, warmup));
                IngestBenchmark.awaitVerified(base, NS, warmup, Duration.ofMinutes(60));
                double maxRate = warmup / ((System.nanoTime() - t0) / 1e9);
                double rate = maxRate * load;
                System.out.printf("maximum rate: %.2f documents/s; steady load: %.2f documents/s%n", maxRate, rate);

                HttpClient http = HttpClient.newHttpClient();
                double[] buildsBefore = ScaleRequests.snapshotBuilds(http, base, false);
                Watcher watcher = new Watcher(base, pollMs);
                Thread watching = Thread.ofPlatform().name("freshness-watcher").start(watcher);
                Map<String, Long> acknowledged = new LinkedHashMap<>();
                long start = System.nanoTime();
                long spacing = (long) (1e9 / rate);
                for (int i = 0; i < measured; i++) {
                    long due = start + i * spacing;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    JsonNode doc = corpus.get(warmup + i);
                    Corpus.send(producer, topic, NS, doc).get(30, TimeUnit.SECONDS);
                    acknowledged.put(doc.path("doc_id").asText(), System.nanoTime());
                }
                long sendSeconds = System.nanoTime() - start;
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
                while (!watcher.queryable.keySet().containsAll(acknowledged.keySet())) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("documents not queryable within 10 minutes of the last send");
                    }
                    TimeUnit.MILLISECONDS.sleep(100);
                }
                watcher.stop.set(true);
                watching.join();
                double[] buildsAfter = ScaleRequests.snapshotBuilds(http, base, false);

                List<double[]> points = new ArrayList<>(); // {seconds since the first send, freshness seconds}
                List<Double> freshness = new ArrayList<>();
                for (Map.Entry<String, Long> e : acknowledged.entrySet()) {
                    double f = (watcher.queryable.get(e.getKey()) - e.getValue()) / 1e9;
                    freshness.add(f);
                    points.add(new double[] {(e.getValue() - start) / 1e9, f});
                }
                List<Double> sorted = freshness.stream().sorted().toList();
                result.put("dataset", data.getFileName().toString());
                result.put("embedder", defaults.understanding().embedder().id());
                result.put("warmup_documents", warmup);
                result.put("documents", measured);
                result.put("max_documents_per_s", maxRate);
                result.put("load", load);
                result.put("offered_documents_per_s", rate);
                result.put("achieved_send_documents_per_s", measured / (sendSeconds / 1e9));
                result.put("poll_ms", pollMs);
                result.put("freshness_p50_s", quantile(sorted, 0.5));
                result.put("freshness_p90_s", quantile(sorted, 0.9));
                result.put("freshness_p99_s", quantile(sorted, 0.99));
                result.put("freshness_max_s", sorted.get(sorted.size() - 1));
                result.put("goal_p99_s", 2.0);
                // what the freshness costs: the watcher's retrievals meanwhile, and the snapshot rebuilds they caused
                List<Double> retrievals =
                        watcher.retrievalMillis.stream().sorted().toList();
                result.put("retrievals", retrievals.size());
                result.put("retrieval_p50_ms", quantile(retrievals, 0.5));
                result.put("retrieval_p99_ms", quantile(retrievals, 0.99));
                long builds = Math.round(buildsAfter[1] - buildsBefore[1]);
                result.put("snapshot_builds", builds);
                result.put("snapshot_builds_per_s", builds / ((System.nanoTime() - start) / 1e9));
                result.put(
                        "snapshot_build_mean_ms", builds == 0 ? 0 : 1000 * (buildsAfter[0] - buildsBefore[0]) / builds);
                if (opts.containsKey("--plot")) {
                    plot(points, rate, Path.of(opts.get("--plot")));
                }
            }
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        System.out.println(json);
        if (opts.containsKey("--out")) {
            Files.writeString(Path.of(opts.get("--out")), json + "\n");
        }
    }

    /** The q-quantile of sorted values, by the nearest rank. */
    static double quantile(List<Double> sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    private static void plot(List<double[]> points, double rate, Path png) throws Exception {
        XYChart chart = new XYChartBuilder()
                .width(800)
                .height(450)
                .title(String.format("Freshness at %.2f documents/s", rate))
                .xAxisTitle("sent at (s)")
                .yAxisTitle("acknowledged → queryable (s)")
                .build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        chart.getStyler().setLegendVisible(false);
        chart.addSeries(
                "documents",
                points.stream().mapToDouble(p -> p[0]).toArray(),
                points.stream().mapToDouble(p -> p[1]).toArray());
        String name = png.toString().replaceFirst("\\.png$", "");
        BitmapEncoder.saveBitmap(chart, name, BitmapEncoder.BitmapFormat.PNG);
    }

    /**
     * Watches the namespace: when each document is first seen VERIFIED (with the memory version seen right after),
     * and when a retrieval's snapshot first reaches that version.
     */
    private static final class Watcher implements Runnable {
        final Map<String, Long> queryable = new ConcurrentHashMap<>();
        final AtomicBoolean stop = new AtomicBoolean();
        /** How long each of the watcher's retrievals took, while the documents went in. */
        final List<Double> retrievalMillis = new CopyOnWriteArrayList<>();

        private final Map<String, Long> verifiedAtVersion = new HashMap<>();
        private final String base;
        private final long pollMs;
        private final HttpClient http = HttpClient.newHttpClient();

        Watcher(String base, long pollMs) {
            this.base = base;
            this.pollMs = pollMs;
        }

        @Override
        public void run() {
            while (!stop.get()) {
                try {
                    tick();
                    TimeUnit.MILLISECONDS.sleep(pollMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    System.err.println("freshness watcher: " + e);
                }
            }
        }

        private void tick() throws Exception {
            List<String> verified = new ArrayList<>();
            String cursor = null;
            do {
                JsonNode page = get("/v1/namespaces/" + NS + "/documents?status=verified&limit=1000"
                        + (cursor == null ? "" : "&cursor=" + cursor));
                page.path("documents").forEach(d -> verified.add(d.path("id").asText()));
                cursor = page.path("next_cursor").isTextual()
                        ? page.path("next_cursor").asText()
                        : null;
            } while (cursor != null);
            long version = get("/v1/namespaces/" + NS)
                    .path("watermark")
                    .path("version")
                    .asLong();
            for (String id : verified) {
                verifiedAtVersion.putIfAbsent(id, version);
            }
            long asked = System.nanoTime();
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + NS + "/retrieve"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"query\": \"when was it founded\", \"mode\": \"dense\", \"top_k\": 1}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            long now = System.nanoTime();
            if (r.statusCode() != 200) {
                return;
            }
            retrievalMillis.add((now - asked) / 1e6);
            long graph = Json.mapper()
                    .readTree(r.body())
                    .path("watermark")
                    .path("graph_version")
                    .asLong(-1);
            verifiedAtVersion.forEach((id, v) -> {
                if (v <= graph) {
                    queryable.putIfAbsent(id, now);
                }
            });
        }

        private JsonNode get(String path) throws Exception {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException(path + " answered " + r.statusCode());
            }
            return Json.mapper().readTree(r.body());
        }
    }
}
