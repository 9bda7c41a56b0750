package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.management.OperatingSystemMXBean;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.cli.Corpus;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.RuleExtractor;
import dev.engram.understanding.Understander;
import java.awt.Color;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Query latency against the size of one namespace, from a thousand passages to a hundred thousand, on one instance with
 * its embedded broker:
 *
 * <ol>
 *   <li>the base documents (the corpora of {@code --data}) are ingested as they are, with the configured embedder;
 *   <li>the namespace then grows with copies of them in which every proper name that is not common across the corpora
 *       is renamed to a made-up word of that copy ({@code Babbage} → {@code Vorekitu}, see {@link CopyNames}), so that
 *       each copy brings its own entities while the common ones (countries, months, ...) gather passages from every
 *       copy, as they would in a real corpus. A copy's texts
 *       are embedded as the base text's vector plus a little seeded noise (cosine about 0.95 to it), which costs no
 *       model time: how long a query takes depends on how many vectors, passages and links there are, not on what
 *       the vectors say;
 *   <li>at each size of {@code --sizes}, once every document is in memory, each offline retrieval mode answers the
 *       same {@code --queries} questions of the sets, each asked {@code --rounds} times, timed end to end over HTTP
 *       ({@code by_size}): every mode is
 *       warmed up first, then the modes take turns on each question; every mode's time includes the model embedding
 *       the question, which is also timed alone ({@code query_embedding});
 *       and while the namespace grows to the next size, a client asks a {@code dense} and a {@code hybrid} question
 *       {@code --ask-per-second} times a second: {@code under_ingest}, which includes the cost of the snapshot and
 *       index updates;
 *   <li>at each size: heap after a collection, resident memory, and the state directory's size (RocksDB).
 * </ol>
 *
 * Usage: {@code ScaleBenchmark [--replot RESULTS.json --plot FILE.png] [--data DIR,DIR]
 * [--sizes 1000,10000,30000,100000] [--queries 50] [--rounds 1]
 * [--ask-per-second 1] [--modes dense,cogito,cogito:push_epsilon=1e-5,...] [--out FILE] [--plot FILE.png]}; a mode with
 * parameters is timed as a variant of its own, side by side with the others.
 */
public final class ScaleBenchmark {

    private static final String NS = "scale";
    private static final List<String> MODES = List.of("dense", "bm25", "fusion", "cogito", "pabd", "gem", "hybrid");

    private ScaleBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse(
                "scale",
                args,
                "--ask-per-second",
                "--data",
                "--modes",
                "--out",
                "--plot",
                "--port",
                "--queries",
                "--replot",
                "--rounds",
                "--sizes");
        if (opts.containsKey("--replot")) { // the plot of an earlier run's results, without running it again
            JsonNode earlier =
                    Json.mapper().readTree(Path.of(opts.get("--replot")).toFile());
            List<Map<String, Object>> rows = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            for (JsonNode r : earlier.path("by_size")) {
                rows.add(Map.of(
                        "passages", r.path("passages").asLong(),
                        "mode", r.path("mode").asText(),
                        "p99_ms", r.path("p99_ms").asDouble()));
                if (!seen.contains(r.path("mode").asText())) {
                    seen.add(r.path("mode").asText());
                }
            }
            plot(rows, seen, Path.of(opts.getOrDefault("--plot", "scale.png")));
            return;
        }
        List<Path> data = Stream.of(
                        opts.getOrDefault("--data", "../shared/data/musique-train100,../shared/data/hotpotqa-train100")
                                .split(","))
                .map(Path::of)
                .toList();
        List<Integer> sizes = Stream.of(
                        opts.getOrDefault("--sizes", "1000,10000,30000,100000").split(","))
                .map(Integer::parseInt)
                .toList();
        int queries = Integer.parseInt(opts.getOrDefault("--queries", "200"));
        // every question asked this many times: the sets hold 200 questions, whose p99 (nearest rank) is the third
        // slowest answer
        int rounds = Integer.parseInt(opts.getOrDefault("--rounds", "1"));
        if (rounds < 1) {
            throw new IllegalArgumentException("--rounds must be at least 1: " + rounds);
        }
        // modes, or variants with parameters ("cogito:push_epsilon=1e-5"), timed side by side
        List<String> modes = opts.containsKey("--modes")
                ? Arrays.stream(opts.get("--modes").split(","))
                        .map(String::strip)
                        .toList()
                : MODES;
        modes.forEach(Retrieval.Variant::parse); // fail before the ingest on an unknown mode or parameter
        double askPerSecond = Double.parseDouble(opts.getOrDefault("--ask-per-second", "1"));

        List<JsonNode> base = new ArrayList<>();
        List<String> questions = new ArrayList<>();
        for (Path d : data) {
            for (JsonNode doc : Corpus.read(d.resolve("corpus.jsonl"), Integer.MAX_VALUE)) {
                ObjectNode copy = doc.deepCopy();
                copy.put("doc_id", d.getFileName() + "/" + doc.path("doc_id").asText());
                base.add(copy);
            }
            for (JsonNode q : Corpus.read(d.resolve("questions.jsonl"), Integer.MAX_VALUE)) {
                questions.add(q.path("question").asText());
            }
        }
        Collections.shuffle(questions, new Random(7));
        List<String> asked = questions.subList(0, Math.min(queries, questions.size()));
        CopyNames names = new CopyNames(commonWords(base));

        EngramConfig defaults = EngramConfig.local(System.getenv());
        Embedder model = OnnxEmbedder.load(
                defaults.understanding().embedder(),
                defaults.understanding().embedMaxTokens(),
                defaults.understanding().embedThreads());
        CopyEmbedder embedder = new CopyEmbedder(model, names);
        Path state = Files.createTempDirectory("engram-scale-");
        Map<String, Object> result = new LinkedHashMap<>();
        result.put(
                "datasets", data.stream().map(p -> p.getFileName().toString()).toList());
        result.put("base_documents", base.size());
        result.put("embedder", model.modelId());
        result.put("queries_per_mode", asked.size() * rounds);
        result.put("questions", asked.size());
        result.put("rounds", rounds);
        List<Map<String, Object>> bySize = new ArrayList<>();
        List<Map<String, Object>> underIngest = new ArrayList<>();
        List<Map<String, Object>> queryEmbedding = new ArrayList<>();
        List<Map<String, Object>> memory = new ArrayList<>();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander = new PassageUnderstander(
                        new RuleExtractor(
                                new EnglishNlp(), defaults.understanding().questionsPerPassage()),
                        embedder,
                        true,
                        defaults.understanding().embedReuseTexts());
                EngramService service = IngestBenchmark.start(
                        broker, state, opts.getOrDefault("--port", "18083"), "engram-scale", understander);
                KafkaProducer<String, byte[]> producer = Corpus.producer(broker.bootstrapServers())) {
            String baseUrl = "http://localhost:" + service.httpPort();
            String topic = service.topics().documents().name();
            HttpClient http = HttpClient.newHttpClient();
            int copy = 0;
            int next = 0; // next document of the current copy
            int sent = 0;
            long passages = 0;
            int previousSize = 0;
            for (int size : sizes) {
                // grow to the size, asking questions meanwhile (after the first size)
                Asker asker = previousSize == 0 ? null : new Asker(baseUrl, asked, askPerSecond);
                Thread asking = asker == null
                        ? null
                        : Thread.ofPlatform().name("scale-asker").start(asker);
                long t0 = System.nanoTime();
                int sentBefore = sent;
                double[] buildsBefore = snapshotBuilds(http, baseUrl);
                while (passages < size) {
                    int batch = Math.max(20, (int) Math.min(2000, (size - passages) / 2));
                    for (int i = 0; i < batch; i++) {
                        JsonNode doc = base.get(next);
                        Corpus.send(producer, topic, NS, copy == 0 ? doc : renamed(doc, copy, names));
                        sent++;
                        if (++next == base.size()) {
                            next = 0;
                            copy++;
                        }
                    }
                    producer.flush();
                    passages = IngestBenchmark.awaitVerified(baseUrl, NS, sent, Duration.ofHours(2))
                            .path("passages")
                            .asLong();
                    System.err.printf(
                            "%d documents, %d passages in memory (copy %d, %.0f s)%n",
                            sent, passages, copy, (System.nanoTime() - t0) / 1e9);
                }
                double ingestSeconds = (System.nanoTime() - t0) / 1e9;
                if (asker != null) {
                    asker.stop.set(true);
                    asking.join();
                    for (Map.Entry<String, List<Double>> e : asker.latencies.entrySet()) {
                        underIngest.add(row(previousSize, passages, e.getKey(), e.getValue()));
                    }
                }
                double[] buildsAfter = snapshotBuilds(http, baseUrl);
                // a snapshot serves for a while after the namespace moved on (GraphLoader): how long after the last
                // write a query, asked every second, is answered from the namespace as it is now; the modes are
                // timed on the namespace at this size, not on a snapshot of it from earlier in the ingest
                double caughtUp = awaitCurrentSnapshot(http, baseUrl, asked.get(0));
                Map<String, Object> mem = memory(passages, state);
                mem.put("documents", sent);
                mem.put("ingest_documents_per_s", (sent - sentBefore) / ingestSeconds);
                mem.put("ingest_passages_per_s", (passages - previousSize) / ingestSeconds);
                mem.put("snapshot_current", caughtUp >= 0);
                mem.put("catch_up_seconds", Math.abs(caughtUp));
                long builds = Math.round(buildsAfter[1] - buildsBefore[1]);
                mem.put("snapshot_builds_while_growing", builds);
                mem.put("snapshot_build_mean_seconds", builds == 0 ? 0 : (buildsAfter[0] - buildsBefore[0]) / builds);
                mem.put("snapshot_build_recent_max_seconds", buildsAfter[2]);
                memory.add(mem);
                // every mode warmed up before any is timed (the snapshot, its indexes, the JIT), then the modes take
                // turns on each question, so that no mode is timed colder than another or in a quieter moment; the
                // work the ingest left behind (compactions) done first, so that the latency is that of the namespace
                // at this size and not of its last writes (under_ingest is that)
                double settled = settle();
                for (String mode : modes) {
                    for (String q : asked.subList(0, Math.min(5, asked.size()))) {
                        retrieve(http, baseUrl, mode, q);
                    }
                }
                settled += settle();
                mem.put("settle_seconds", settled);
                Map<String, List<Double>> timed = new LinkedHashMap<>();
                for (int round = 0; round < rounds; round++) {
                    for (String q : asked) {
                        for (String mode : modes) {
                            timed.computeIfAbsent(mode, m -> new ArrayList<>()).add(retrieve(http, baseUrl, mode, q));
                        }
                    }
                }
                // what every mode's time includes: the model embedding the question (bm25 too, as the service
                // embeds every query), timed alone on the same questions
                List<Double> embedding = new ArrayList<>();
                for (String q : asked) {
                    long e0 = System.nanoTime();
                    model.embed(q);
                    embedding.add((System.nanoTime() - e0) / 1e6);
                }
                Map<String, Object> e = row(passages, passages, "query_embedding", embedding);
                e.remove("passages_from");
                queryEmbedding.add(e);
                for (String mode : modes) {
                    Map<String, Object> r = row(passages, passages, mode, timed.get(mode));
                    r.remove("passages_from");
                    bySize.add(r);
                    System.err.printf(
                            "%d passages, %s: p50 %.1f ms, p99 %.1f ms%n",
                            passages, mode, (Double) r.get("p50_ms"), (Double) r.get("p99_ms"));
                }
                previousSize = (int) passages;
            }
        } finally {
            deleteTree(state);
        }
        result.put("by_size", bySize);
        result.put("under_ingest", underIngest);
        result.put("query_embedding", queryEmbedding);
        result.put("memory", memory);
        result.put(
                "goals",
                Map.of("offline_p99_vs_dense_p99_at_most", 3.0, "graph_modes_10k_to_100k", "sublinear growth of p99"));
        result.put("p99_vs_dense", ratios(bySize));
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        System.out.println(json);
        if (opts.containsKey("--out")) {
            Files.writeString(Path.of(opts.get("--out")), json + "\n");
        }
        if (opts.containsKey("--plot")) {
            plot(bySize, modes, Path.of(opts.get("--plot")));
        }
    }

    /** Capitalized words in at least one in two hundred base documents: kept in every copy, so they gather passages. */
    static Set<String> commonWords(List<JsonNode> docs) {
        Map<String, Integer> df = new HashMap<>();
        for (JsonNode d : docs) {
            Set<String> seen = new HashSet<>();
            Matcher m = CopyNames.CAPITALIZED.matcher(
                    d.path("title").asText() + "\n" + d.path("text").asText());
            while (m.find()) {
                seen.add(m.group());
            }
            seen.forEach(w -> df.merge(w, 1, Integer::sum));
        }
        Set<String> common = new HashSet<>();
        int threshold = Math.max(2, docs.size() / 200);
        df.forEach((w, n) -> {
            if (n >= threshold) {
                common.add(w);
            }
        });
        return common;
    }

    /** Copy {@code k} of a document: its own id, and every uncommon capitalized word renamed. */
    static JsonNode renamed(JsonNode doc, int k, CopyNames names) {
        ObjectNode copy = doc.deepCopy();
        copy.put("doc_id", doc.path("doc_id").asText() + "~" + k);
        copy.put("title", names.rename(doc.path("title").asText(), k));
        copy.put("text", names.rename(doc.path("text").asText(), k));
        return copy;
    }

    /**
     * The model for base texts; for a copy's text (one with renamed words), the vector of the base text it was made
     * from plus seeded noise, so that copies are near their original (cosine about 0.95) but never equal to it. That
     * is for the understanding's texts, which it embeds a passage at a time ({@link #embedAll}); the service embeds a
     * query and each of its sub-queries one by one ({@link #embed}), and those are the model's work every time, as a
     * user's query is: were their vectors kept, the first mode to ask a question would pay for the model and every
     * other mode would not.
     */
    static final class CopyEmbedder implements Embedder {
        private final Embedder model;
        private final CopyNames names;
        private final Map<String, float[]> base = new ConcurrentHashMap<>();

        CopyEmbedder(Embedder model, CopyNames names) {
            this.model = model;
            this.names = names;
        }

        @Override
        public String modelId() {
            return model.modelId();
        }

        @Override
        public int dimensions() {
            return model.dimensions();
        }

        @Override
        public float[] embed(String text) {
            return model.embed(text);
        }

        @Override
        public List<float[]> embedAll(List<String> texts) {
            return texts.stream().map(this::understood).toList();
        }

        private float[] understood(String text) {
            String original = names.original(text);
            float[] known = base.computeIfAbsent(original, model::embed);
            if (original.equals(text)) {
                return known;
            }
            float[] v = known.clone();
            SplittableRandom noise = new SplittableRandom(text.hashCode());
            double sigma = 0.33 / Math.sqrt(v.length);
            double norm = 0;
            for (int i = 0; i < v.length; i++) {
                v[i] += (float) (sigma * gaussian(noise));
                norm += (double) v[i] * v[i];
            }
            float inv = (float) (1 / Math.sqrt(norm));
            for (int i = 0; i < v.length; i++) {
                v[i] *= inv;
            }
            return v;
        }

        private static double gaussian(SplittableRandom r) {
            // Box–Muller
            double u = Math.max(1e-12, r.nextDouble());
            return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
        }

        @Override
        public void close() {
            model.close();
        }
    }

    /** Asks a dense and a hybrid question {@code perSecond} times a second until stopped. */
    private static final class Asker implements Runnable {
        final AtomicBoolean stop = new AtomicBoolean();
        final Map<String, List<Double>> latencies = new LinkedHashMap<>();
        private final String base;
        private final List<String> questions;
        private final double perSecond;

        Asker(String base, List<String> questions, double perSecond) {
            this.base = base;
            this.questions = questions;
            this.perSecond = perSecond;
        }

        @Override
        public void run() {
            HttpClient http = HttpClient.newHttpClient();
            int i = 0;
            long spacing = (long) (1e9 / perSecond);
            long next = System.nanoTime();
            while (!stop.get()) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    try {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                next += spacing;
                for (String mode : List.of("dense", "hybrid")) {
                    try {
                        double ms = retrieve(http, base, mode, questions.get(i % questions.size()));
                        latencies.computeIfAbsent(mode, k -> new ArrayList<>()).add(ms);
                    } catch (Exception e) {
                        latencies
                                .computeIfAbsent(mode + "_failed", k -> new ArrayList<>())
                                .add(0.0);
                    }
                }
                i++;
            }
        }
    }

    /** One retrieval, timed end to end; fails unless it is answered with 200. */
    static double retrieve(HttpClient http, String base, String mode, String question) throws Exception {
        ObjectNode body = Json.mapper().createObjectNode();
        Retrieval.Variant variant = Retrieval.Variant.parse(mode);
        body.put("query", question).put("mode", variant.mode()).put("top_k", 5);
        ObjectNode params = body.putObject("params");
        variant.params().forEach(params::put);
        long t0 = System.nanoTime();
        HttpResponse<String> r = post(http, base, body);
        double ms = (System.nanoTime() - t0) / 1e6;
        if (r.statusCode() != 200) {
            throw new IllegalStateException(mode + " answered " + r.statusCode() + ": " + r.body());
        }
        return ms;
    }

    /** A retrieval request to the namespace. */
    private static HttpResponse<String> post(HttpClient http, String base, ObjectNode body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + NS + "/retrieve"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static Map<String, Object> row(long from, long passages, String mode, List<Double> ms) {
        List<Double> sorted = ms.stream().sorted().toList();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("passages_from", from);
        r.put("passages", passages);
        r.put("mode", mode);
        r.put("queries", sorted.size());
        r.put("p50_ms", sorted.isEmpty() ? 0.0 : FreshnessBenchmark.quantile(sorted, 0.5));
        r.put("p99_ms", sorted.isEmpty() ? 0.0 : FreshnessBenchmark.quantile(sorted, 0.99));
        return r;
    }

    /** Each mode's p99 over dense's p99 at the same size. */
    private static List<Map<String, Object>> ratios(List<Map<String, Object>> bySize) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : bySize) {
            double dense = bySize.stream()
                    .filter(d -> d.get("passages").equals(r.get("passages"))
                            && d.get("mode").equals("dense"))
                    .mapToDouble(d -> (Double) d.get("p99_ms"))
                    .findFirst()
                    .orElse(Double.NaN);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("passages", r.get("passages"));
            x.put("mode", r.get("mode"));
            x.put("p99_vs_dense", (Double) r.get("p99_ms") / dense);
            out.add(x);
        }
        return out;
    }

    /**
     * Asks until an answer comes from a snapshot of the namespace's last memory change ({@code graph_version} equal to
     * the watermark's {@code version}); returns the seconds waited, negated when twenty minutes passed without one (a
     * snapshot that took {@code b} to build serves for {@code 3·b} under the default build share: at 100k passages,
     * minutes).
     */
    private static double awaitCurrentSnapshot(HttpClient http, String base, String question) throws Exception {
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofMinutes(20).toNanos();
        while (true) {
            ObjectNode body = Json.mapper().createObjectNode();
            body.put("query", question).put("mode", "dense").put("top_k", 1);
            HttpResponse<String> r = post(http, base, body);
            JsonNode watermark = Json.mapper().readTree(r.body()).path("watermark");
            if (watermark.path("graph_version").asLong(-1)
                    == watermark.path("version").asLong(-2)) {
                return (System.nanoTime() - t0) / 1e9;
            }
            if (System.nanoTime() > deadline) {
                System.err.println("no snapshot of the namespace's last change after 20 minutes: " + r.body());
                return -(System.nanoTime() - t0) / 1e9;
            }
            Thread.sleep(1000);
        }
    }

    /**
     * The snapshot builds so far, from the service's Prometheus endpoint: the seconds they took in all, how many there
     * were, and the longest of the last few minutes (Micrometer's decaying maximum).
     */
    static double[] snapshotBuilds(HttpClient http, String base) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        double[] sumCountMax = new double[3];
        for (String line : r.body().split("\n")) {
            if (!line.startsWith("engram_snapshot_builds_seconds") || !line.contains("outcome=\"ok\"")) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (line.startsWith("engram_snapshot_builds_seconds_sum")) {
                sumCountMax[0] += value;
            } else if (line.startsWith("engram_snapshot_builds_seconds_count")) {
                sumCountMax[1] += value;
            } else if (line.startsWith("engram_snapshot_builds_seconds_max")) {
                sumCountMax[2] = Math.max(sumCountMax[2], value);
            }
        }
        return sumCountMax;
    }

    /**
     * Waits until this process (the service and its broker) is quiet — less than a tenth of a core over two seconds —
     * or two minutes have passed; returns the seconds waited.
     */
    private static double settle() throws InterruptedException {
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            long cpu = os.getProcessCpuTime();
            long w0 = System.nanoTime();
            Thread.sleep(2000);
            double cores = (os.getProcessCpuTime() - cpu) / (double) (System.nanoTime() - w0);
            if (cores < 0.1) {
                break;
            }
        }
        double waited = (System.nanoTime() - t0) / 1e9;
        System.err.printf(Locale.ROOT, "settled after %.0f s%n", waited);
        return waited;
    }

    private static Map<String, Object> memory(long passages, Path state) throws IOException {
        System.gc();
        Map<String, Object> m = new LinkedHashMap<>();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long rss = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        // by store: a Kafka Streams state directory holds <application>/<task>/rocksdb/<store>/…, summed over tasks
        Map<String, Long> byStore = new TreeMap<>();
        try (Stream<Path> files = Files.walk(state)) {
            files.filter(Files::isRegularFile)
                    .forEach(p -> byStore.merge(
                            storeOf(state.relativize(p)), p.toFile().length(), Long::sum));
        }
        long disk = byStore.values().stream().mapToLong(Long::longValue).sum();
        double per10k = 10_000.0 / Math.max(1, passages);
        m.put("passages", passages);
        m.put("heap_mb", heap / 1e6);
        m.put("rss_mb", rss / 1e6);
        m.put("state_dir_mb", disk / 1e6);
        m.put("heap_mb_per_10k_passages", heap / 1e6 * per10k);
        m.put("state_dir_mb_per_10k_passages", disk / 1e6 * per10k);
        Map<String, Double> stores = new LinkedHashMap<>();
        byStore.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> stores.put(e.getKey(), e.getValue() / 1e6));
        m.put("state_mb_by_store", stores);
        System.err.printf(
                Locale.ROOT,
                "%d passages: heap %.0f MB, RSS %.0f MB, state %.0f MB (by store: %s)%n",
                passages,
                heap / 1e6,
                rss / 1e6,
                disk / 1e6,
                stores);
        return m;
    }

    /** The store a file of the state directory belongs to: the directory under {@code rocksdb}, else its top one. */
    static String storeOf(Path relative) {
        for (int i = 0; i + 1 < relative.getNameCount() - 1; i++) {
            if (relative.getName(i).toString().equals("rocksdb")) {
                return relative.getName(i + 1).toString();
            }
        }
        return relative.getNameCount() > 1 ? relative.getName(0).toString() : "(files)";
    }

    private static void plot(List<Map<String, Object>> bySize, List<String> modes, Path png) throws IOException {
        XYChart chart = new XYChartBuilder()
                .width(900)
                .height(500)
                .title("Query latency p99 against namespace size")
                .xAxisTitle("passages in the namespace")
                .yAxisTitle("p99 (ms)")
                .build();
        // sizes a decade apart on a logarithmic axis; latencies on a linear one from 0, labelled, with the goal drawn
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("0");
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        for (String mode : modes) {
            List<Map<String, Object>> rows =
                    bySize.stream().filter(r -> r.get("mode").equals(mode)).toList();
            chart.addSeries(
                    mode,
                    rows.stream()
                            .mapToDouble(r -> ((Number) r.get("passages")).doubleValue())
                            .toArray(),
                    rows.stream().mapToDouble(r -> (Double) r.get("p99_ms")).toArray());
        }
        List<Map<String, Object>> dense =
                bySize.stream().filter(r -> r.get("mode").equals("dense")).toList();
        if (!dense.isEmpty()) {
            XYSeries goal = chart.addSeries(
                    "3 × dense (goal)",
                    dense.stream()
                            .mapToDouble(r -> ((Number) r.get("passages")).doubleValue())
                            .toArray(),
                    dense.stream()
                            .mapToDouble(r -> 3 * (Double) r.get("p99_ms"))
                            .toArray());
            goal.setLineStyle(SeriesLines.DASH_DASH);
            goal.setMarker(SeriesMarkers.NONE);
            goal.setLineColor(Color.GRAY);
        }
        BitmapEncoder.saveBitmap(chart, png.toString().replaceFirst("\\.png$", ""), BitmapEncoder.BitmapFormat.PNG);
    }

    static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.sorted(Collections.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("could not remove " + root + ": " + e);
        }
    }
}
