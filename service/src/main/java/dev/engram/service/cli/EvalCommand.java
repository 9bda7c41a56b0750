package dev.engram.service.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code engram eval --data DIR[,DIR...] [--modes m1,m2:param=value] [--top-k 5] [--out results.json]
 * [--per-question true] [--serve true] [--keep WORKDIR] [--late-percent P]}:
 * for each set, ingests DIR/corpus.jsonl through
 * the real pipeline on an embedded broker, waits until every document is in memory, asks every question of
 * DIR/questions.jsonl over the HTTP API in each mode, and reports Recall@2 and Recall@5 over documents (the
 * HippoRAG protocol) with latency percentiles. With {@code --keep}, each set's broker and state live in
 * WORKDIR/&lt;set&gt; and a later run with the same corpus, extractor and embedder asks its questions of that memory
 * without ingesting again (to compare retrieval code over one ingest). With {@code --late-percent}, P % of each corpus
 * is sent only once the whole query snapshot of the rest is built, and every question is answered from that snapshot
 * and the recent layer of the late documents beside it; a later run with the same {@code --keep} and no late share
 * answers the same memory from whole snapshots, which isolates what the recent layer costs.
 */
public final class EvalCommand {

    private static final String NAMESPACE = "eval";

    private EvalCommand() {}

    /**
     * What {@code engram eval} is asked: the sets ({@code --data}), the modes (each with its parameters; all modes
     * when none), the results asked per question ({@code top_k}), where to write the results (or null), whether to
     * keep per-question ranks, whether to serve the ingested set afterwards, and where to keep each set's ingest (or
     * null).
     */
    record Settings(
            List<Path> sets,
            List<String> modes,
            int topK,
            Path out,
            boolean perQuestion,
            boolean serve,
            Path keep,
            int latePercent) {
        Settings {
            if (latePercent < 0 || latePercent > 50) {
                throw new IllegalArgumentException("--late-percent must be 0-50");
            }

            sets = sets == null
                    ? List.of()
                    : sets.stream().filter(d -> !d.toString().isBlank()).toList();
            modes = modes == null || modes.isEmpty() ? List.copyOf(Retrieval.modes()) : List.copyOf(modes);
            modes.forEach(Retrieval.Variant::parse); // fail fast on an unknown mode or parameter
            if (topK < 5 || topK > 100) {
                throw new IllegalArgumentException("--top-k must be 5-100 (recall is reported at 2 and 5)");
            }
            if (sets.isEmpty()) {
                throw new IllegalArgumentException("--data needs at least one directory");
            }
            if (sets.stream().map(d -> d.getFileName().toString()).distinct().count() != sets.size()) {
                throw new IllegalArgumentException("the --data sets must have distinct directory names");
            }
            if (serve && sets.size() != 1) {
                throw new IllegalArgumentException("--serve needs exactly one --data set");
            }
        }
    }

    /** Runs on the command line's arguments (read as {@code engram eval} reads them). */
    public static void run(List<String> args, EngramConfig base, PrintStream out) throws Exception {
        run(Cli.Eval.settings(args), base, out);
    }

    static void run(Settings settings, EngramConfig base, PrintStream out) throws Exception {
        List<Path> sets = settings.sets();
        List<String> modes = settings.modes();
        int topK = settings.topK();
        boolean serve = settings.serve();
        boolean perQuestion = settings.perQuestion();
        Path keep = settings.keep();
        List<Map<String, Object>> results = new ArrayList<>();
        for (Path data : sets) {
            results.add(evaluateSet(data, modes, topK, serve, keep, settings.latePercent(), out));
        }
        if (!perQuestion) {
            results.forEach(EvalCommand::dropPerQuestion);
        }
        Object written = results.get(0);
        if (results.size() > 1) {
            Map<String, Object> summary = summary(results);
            printSummary(summary, out);
            Map<String, Object> all = new LinkedHashMap<>();
            all.put("sets", results);
            all.put("summary", summary);
            written = all;
        }
        if (settings.out() != null) {
            Files.write(
                    settings.out(),
                    Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(written));
            out.printf("wrote %s%n", settings.out());
        }
    }

    @SuppressWarnings("unchecked")
    private static void dropPerQuestion(Map<String, Object> set) {
        ((Map<String, Object>) set.get("modes")).values().forEach(m -> {
            ((Map<String, Object>) m).remove("gold_ranks");
            ((Map<String, Object>) m).remove("why");
        });
    }

    /**
     * Per mode, its Recall@5 gain over {@code dense} on every set and the worst of them (with its set): a mode is only as
     * good as on the set it helps least. Empty without {@code dense} among the modes.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> summary(List<Map<String, Object>> sets) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (sets.stream().anyMatch(r -> !((Map<String, Object>) r.get("modes")).containsKey("dense"))) {
            return out;
        }
        Map<String, Object> firstModes = (Map<String, Object>) sets.get(0).get("modes");
        for (String mode : firstModes.keySet()) {
            Map<String, Double> gains = new LinkedHashMap<>();
            String worstSet = null;
            double worst = Double.POSITIVE_INFINITY;
            for (Map<String, Object> r : sets) {
                Map<String, Object> modes = (Map<String, Object>) r.get("modes");
                Map<String, Double> m = (Map<String, Double>) modes.get(mode);
                if (m == null) {
                    continue;
                }
                double gain = m.get("recall@5") - ((Map<String, Double>) modes.get("dense")).get("recall@5");
                String set = (String) r.get("dataset");
                gains.put(set, gain);
                if (gain < worst) {
                    worst = gain;
                    worstSet = set;
                }
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("gain_r5_over_dense", gains);
            entry.put("worst_gain_r5", worst);
            entry.put("worst_set", worstSet);
            out.put(mode, entry);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void printSummary(Map<String, Object> summary, PrintStream out) {
        if (summary.isEmpty()) {
            return;
        }
        out.printf("%nRecall@5 gain over dense, per set, and the worst set%n");
        List<String> setNames = List.copyOf(((Map<String, Double>)
                        ((Map<String, Object>) summary.values().iterator().next()).get("gain_r5_over_dense"))
                .keySet());
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-24s", "mode"));
        setNames.forEach(n -> header.append(String.format(Locale.ROOT, " %20s", n)));
        out.println(header.append(String.format(Locale.ROOT, " %8s  %s", "worst", "worst set")));
        summary.forEach((mode, v) -> {
            Map<String, Object> e = (Map<String, Object>) v;
            Map<String, Double> gains = (Map<String, Double>) e.get("gain_r5_over_dense");
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-24s", mode));
            setNames.forEach(n -> line.append(
                    gains.containsKey(n)
                            ? String.format(Locale.ROOT, " %+20.1f", gains.get(n))
                            : String.format(Locale.ROOT, " %20s", "-")));
            out.println(line.append(
                    String.format(Locale.ROOT, " %+8.1f  %s", (Double) e.get("worst_gain_r5"), e.get("worst_set"))));
        });
    }

    private static Map<String, Object> evaluateSet(
            Path data, List<String> modes, int topK, boolean serve, Path keep, int latePercent, PrintStream out)
            throws Exception {
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), Integer.MAX_VALUE);
        List<JsonNode> questions = Corpus.read(data.resolve("questions.jsonl"), Integer.MAX_VALUE);
        Map<String, String> docStrings = new HashMap<>();
        for (JsonNode d : corpus) {
            // gold documents are named by a line's "doc" when it has one, else by its title and text
            docStrings.put(
                    d.path("doc_id").asText(),
                    d.path("doc").isTextual()
                            ? d.path("doc").asText()
                            : d.path("title").asText() + "\n" + d.path("text").asText());
        }

        Path work = keep == null
                ? Files.createTempDirectory("engram-eval-")
                : Files.createDirectories(keep.resolve(data.getFileName().toString()));
        Path marker = work.resolve("ingested.json");
        String corpusHash = sha256(data.resolve("corpus.jsonl"));
        JsonNode kept = Files.exists(marker) ? Json.mapper().readTree(marker.toFile()) : null;
        if (kept != null && !corpusHash.equals(kept.path("corpus_sha256").asText())) {
            throw new IllegalArgumentException(
                    work + " holds the ingest of another corpus: delete it or --keep elsewhere");
        }
        if (kept != null && latePercent > 0) {
            throw new IllegalArgumentException(
                    work + " holds an ingest already, whose questions are answered from whole"
                            + " snapshots: --late-percent needs a new --keep (a later run without it answers the same memory"
                            + " whole)");
        }
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(work.resolve("kafka"), 0, keep == null)) {
            int port = freePort();
            Map<String, String> env = new HashMap<>(System.getenv());
            env.put("ENGRAM_BOOTSTRAP_SERVERS", broker.bootstrapServers());
            env.put("ENGRAM_STATE_DIR", work.resolve("state").toString());
            env.put("ENGRAM_HTTP_HOST", "127.0.0.1");
            env.put("ENGRAM_HTTP_PORT", Integer.toString(port));
            env.put("ENGRAM_ADVERTISED_HOST", "127.0.0.1");
            env.put("ENGRAM_ADVERTISED_PORT", Integer.toString(port));
            env.put("ENGRAM_APPLICATION_ID", "engram-eval");
            if (latePercent > 0) {
                // the whole snapshot of the early documents serves every question: it is rebuilt neither in the
                // background (an hour's staleness bound, never quiet that long) nor by a query (every build costly)
                env.put("ENGRAM_SNAPSHOT_MAX_STALENESS_MS", "3600000");
                env.put("ENGRAM_SNAPSHOT_BACKGROUND_MS", "0");
            }
            EngramConfig config = EngramConfig.local(env);
            try (EngramService service = EngramService.start(config)) {
                if (!service.awaitRunning(Duration.ofMinutes(2))) {
                    throw new IllegalStateException("the service did not start");
                }
                String baseUrl = "http://127.0.0.1:" + port;
                JsonNode health = get(baseUrl + "/v1/health");
                String extractor = health.path("extractor").asText();
                String embedder = health.path("embedder").asText();
                if (kept != null
                        && !(extractor.equals(kept.path("extractor").asText())
                                && embedder.equals(kept.path("embedder").asText()))) {
                    throw new IllegalArgumentException(work + " holds an ingest by "
                            + kept.path("extractor").asText()
                            + " with " + kept.path("embedder").asText() + ", not " + extractor + " with " + embedder
                            + ": delete it or --keep elsewhere");
                }
                long t0 = System.nanoTime();
                List<List<JsonNode>> steps = latePercent == 0 ? List.of(corpus) : lateSplit(corpus, latePercent);
                if (kept == null) {
                    for (int step = 0; step < steps.size(); step++) {
                        if (step > 0) {
                            awaitIngested(baseUrl, steps.get(0).size(), out);
                            // builds the whole snapshot of the early documents, which then serves every question
                            post(
                                    baseUrl + "/v1/namespaces/" + NAMESPACE + "/retrieve",
                                    request("dense", topK, questions.get(0)));
                        }
                        Corpus.produce(
                                broker.bootstrapServers(),
                                service.topics().documents().name(),
                                NAMESPACE,
                                steps.get(step));
                    }
                }
                JsonNode stats = awaitIngested(baseUrl, corpus.size(), out);
                double ingestSeconds = kept == null
                        ? (System.nanoTime() - t0) / 1e9
                        : kept.path("ingest_seconds").asDouble();
                long passages = stats.path("passages").asLong();
                out.printf(
                        "%s %d documents, %d passages in %.1f s (%.1f passages/s)%n",
                        kept == null ? "ingested" : "reused the ingest in " + work + " of",
                        corpus.size(),
                        passages,
                        ingestSeconds,
                        passages / ingestSeconds);
                if (keep != null && kept == null) {
                    ObjectNode m = Json.mapper().createObjectNode();
                    m.put("corpus_sha256", corpusHash);
                    m.put("extractor", extractor);
                    m.put("embedder", embedder);
                    m.put("ingest_seconds", ingestSeconds);
                    m.put("late_percent", latePercent);
                    Files.write(marker, Json.toBytes(m));
                }

                Map<String, Object> results = new LinkedHashMap<>();
                results.put("dataset", data.getFileName().toString());
                results.put("questions", questions.size());
                results.put("passages", passages);
                results.put("extractor", extractor);
                results.put("embedder", embedder);
                results.put("ingest_seconds", ingestSeconds);
                if (latePercent > 0) {
                    results.put("late_documents", steps.get(1).size());
                    results.put("recent_layer", recentLayer(baseUrl, questions.get(0), topK));
                }
                Map<String, Object> byMode = new LinkedHashMap<>();
                for (String mode : modes) {
                    byMode.put(mode, evaluate(baseUrl, mode, topK, questions, docStrings));
                }
                results.put("modes", byMode);
                print(results, out);
                if (serve) {
                    out.printf("serving namespace '%s' on %s until interrupted%n", NAMESPACE, baseUrl);
                    new CountDownLatch(1).await();
                }
                return results;
            }
        } finally {
            if (keep == null) {
                EmbeddedKafkaBroker.deleteRecursively(work);
            }
        }
    }

    /**
     * The corpus in two steps: the documents sent first, and the late ones, {@code percent} % of them (at least one)
     * chosen at random with a fixed seed, each step in the corpus's order.
     */
    static List<List<JsonNode>> lateSplit(List<JsonNode> corpus, int percent) {
        int lateCount = Math.max(1, (int) Math.round(corpus.size() * percent / 100.0));
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < corpus.size(); i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(20_260_101L));
        Set<Integer> late = new HashSet<>(order.subList(0, Math.min(lateCount, order.size())));
        List<JsonNode> first = new ArrayList<>();
        List<JsonNode> then = new ArrayList<>();
        for (int i = 0; i < corpus.size(); i++) {
            (late.contains(i) ? then : first).add(corpus.get(i));
        }
        return List.of(first, then);
    }

    /**
     * The recent layer a question is answered with once the late documents are in memory: its passages and the
     * versions of the two snapshots. Fails when the answers did not come from a recent layer beside an older whole
     * snapshot, as the late share asks.
     */
    private static Map<String, Object> recentLayer(String baseUrl, JsonNode question, int topK) throws Exception {
        JsonNode r = post(baseUrl + "/v1/namespaces/" + NAMESPACE + "/retrieve", request("dense", topK, question));
        JsonNode watermark = r.path("watermark");
        JsonNode recent = r.path("explanation").path("recent");
        if (recent.isMissingNode()
                || watermark.path("whole_graph_version").asLong()
                        >= watermark.path("graph_version").asLong()) {
            throw new IllegalStateException(
                    "the late documents were not answered from a recent layer beside the early ones' snapshot: " + r);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("passages", recent.path("passages").asLong());
        out.put("graph_version", watermark.path("graph_version").asLong());
        out.put("whole_graph_version", watermark.path("whole_graph_version").asLong());
        return out;
    }

    private static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The retrieve request of a question in a mode (with its parameters). */
    private static ObjectNode request(String mode, int topK, JsonNode q) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("query", q.path("question").asText());
        Retrieval.Variant variant = Retrieval.Variant.parse(mode);
        body.put("mode", variant.mode());
        ObjectNode params = body.putObject("params");
        variant.params().forEach(params::put);
        body.put("top_k", Math.max(topK, 5) * 3); // passages; several may come from one document
        return body;
    }

    private static Map<String, Object> evaluate(
            String baseUrl, String mode, int topK, List<JsonNode> questions, Map<String, String> docStrings)
            throws Exception {
        double r2 = 0;
        double r5 = 0;
        List<Double> latencies = new ArrayList<>();
        List<int[]> goldRanks = new ArrayList<>();
        List<Map<String, Object>> why = new ArrayList<>();
        // questions may carry a category (a set's kinds of question, e.g. temporal ones): Recall@5 of each apart
        Map<String, double[]> byCategory = new TreeMap<>();
        // one request untimed first: the first a namespace or a mode is asked builds what it reads lazily (the
        // snapshot, a mode's per-snapshot structures), which is no question's latency
        if (!questions.isEmpty()) {
            post(baseUrl + "/v1/namespaces/" + NAMESPACE + "/retrieve", request(mode, topK, questions.get(0)));
        }
        for (JsonNode q : questions) {
            Set<String> gold = new LinkedHashSet<>();
            q.path("gold_docs").forEach(g -> gold.add(g.asText()));
            ObjectNode body = request(mode, topK, q);
            long t0 = System.nanoTime();
            JsonNode reply = post(baseUrl + "/v1/namespaces/" + NAMESPACE + "/retrieve", body);
            latencies.add((System.nanoTime() - t0) / 1e6);
            List<String> docs = new ArrayList<>();
            List<String> titles = new ArrayList<>();
            for (JsonNode r : reply.path("results")) {
                String doc = docStrings.get(r.path("document_id").asText());
                if (doc != null && !docs.contains(doc)) {
                    docs.add(doc);
                    titles.add(r.path("title").asText());
                }
            }
            Map<String, Object> explained = new LinkedHashMap<>();
            explained.put("top_titles", titles.subList(0, Math.min(topK, titles.size())));
            explained.put("explanation", reply.path("explanation"));
            why.add(explained);
            r2 += recall(docs, gold, 2);
            r5 += recall(docs, gold, 5);
            goldRanks.add(ranks(docs, gold));
            if (q.has("category")) {
                String category = q.path("category").asText();
                byCategory.computeIfAbsent(category, c -> new double[2])[0] += recall(docs, gold, 5);
                byCategory.get(category)[1]++;
            }
        }
        latencies.sort(Double::compare);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("recall@2", 100 * r2 / Math.max(1, questions.size()));
        m.put("recall@5", 100 * r5 / Math.max(1, questions.size()));
        if (!byCategory.isEmpty()) {
            Map<String, Object> categories = new LinkedHashMap<>();
            byCategory.forEach((c, sums) -> categories.put(
                    c, Map.of("questions", (long) sums[1], "recall@5", 100 * sums[0] / Math.max(1, sums[1]))));
            m.put("recall@5_by_category", categories);
        }
        m.put("p50_ms", percentile(latencies, 0.50));
        m.put("p99_ms", percentile(latencies, 0.99));
        m.put("gold_ranks", goldRanks);
        m.put("why", why);
        return m;
    }

    /** The 1-based rank of each gold document in {@code ranked}, 0 for one not retrieved. */
    public static int[] ranks(List<String> ranked, Set<String> gold) {
        return gold.stream().mapToInt(g -> ranked.indexOf(g) + 1).toArray();
    }

    /**
     * Against dense, question by question: on how many questions a mode's Recall@5 is higher ({@code [0]}) and lower
     * ({@code [1]}) than dense's. Two modes with the same mean can win and lose on very different questions.
     */
    public static int[] wonLost(List<int[]> mode, List<int[]> dense) {
        int won = 0;
        int lost = 0;
        for (int q = 0; q < mode.size() && q < dense.size(); q++) {
            int a = within(mode.get(q), 5);
            int b = within(dense.get(q), 5);
            won += a > b ? 1 : 0;
            lost += a < b ? 1 : 0;
        }
        return new int[] {won, lost};
    }

    private static int within(int[] ranks, int k) {
        return (int) Arrays.stream(ranks).filter(r -> r >= 1 && r <= k).count();
    }

    static double recall(List<String> ranked, Set<String> gold, int k) {
        if (gold.isEmpty()) {
            return 0;
        }
        long hit = ranked.stream().limit(k).filter(gold::contains).count();
        return (double) hit / gold.size();
    }

    static double percentile(List<Double> sorted, double q) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int i = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    @SuppressWarnings("unchecked")
    private static void print(Map<String, Object> results, PrintStream out) {
        out.printf(
                "%n%s: %s questions, %s passages, extractor %s, embedder %s%n",
                results.get("dataset"),
                results.get("questions"),
                results.get("passages"),
                results.get("extractor"),
                results.get("embedder"));
        int width = Math.max(
                10,
                ((Map<String, Object>) results.get("modes"))
                        .keySet().stream().mapToInt(String::length).max().orElse(0));
        Map<String, Object> modes = (Map<String, Object>) results.get("modes");
        Map<String, Object> dense = (Map<String, Object>) modes.get("dense");
        out.printf(
                "%-" + width + "s %9s %9s %9s %11s %9s %9s%n",
                "mode",
                "R@2",
                "R@5",
                "R@5-dense",
                "won/lost",
                "p50 ms",
                "p99 ms");
        modes.forEach((mode, v) -> {
            Map<String, Object> m = (Map<String, Object>) v;
            double r5 = (Double) m.get("recall@5");
            int[] wl = dense == null
                    ? null
                    : wonLost((List<int[]>) m.get("gold_ranks"), (List<int[]>) dense.get("gold_ranks"));
            out.printf(
                    Locale.ROOT,
                    "%-" + width + "s %9.1f %9.1f %9s %11s %9.1f %9.1f%n",
                    mode,
                    (Double) m.get("recall@2"),
                    r5,
                    dense == null ? "-" : String.format(Locale.ROOT, "%+.1f", r5 - (Double) dense.get("recall@5")),
                    wl == null ? "-" : "+" + wl[0] + "/-" + wl[1],
                    (Double) m.get("p50_ms"),
                    (Double) m.get("p99_ms"));
        });
    }

    private static JsonNode awaitIngested(String baseUrl, int documents, PrintStream out) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(60);
        long lastReport = System.nanoTime();
        JsonNode stats = null;
        while (System.nanoTime() < deadline) {
            stats = get(baseUrl + "/v1/namespaces/" + NAMESPACE);
            int verified = stats == null
                    ? 0
                    : stats.path("documents_by_status").path("VERIFIED").asInt();
            if (verified >= documents) {
                return stats;
            }
            if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(15)) {
                out.printf("  ... %d of %d documents in memory%n", verified, documents);
                lastReport = System.nanoTime();
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new IllegalStateException("ingest did not finish within an hour: " + stats);
    }

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static JsonNode get(String url) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        return r.statusCode() == 200 ? Json.mapper().readTree(r.body()) : null;
    }

    private static JsonNode post(String url, JsonNode body) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body)))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("retrieve failed with HTTP " + r.statusCode() + ": "
                    + new String(r.body(), StandardCharsets.UTF_8));
        }
        return Json.mapper().readTree(r.body());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
