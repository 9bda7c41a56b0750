package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

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
 * With {@code --replay true} the copies are not read and understood: their understandings are made from the recorded
 * understandings of the base documents ({@link UnderstandingReplay}, which says what that skips) and sent to the
 * understandings topic, so that the namespace grows as fast as the memory step takes them.
 *
 * Usage: {@code ScaleBenchmark [--replot RESULTS.json --plot FILE.png] [--data DIR,DIR]
 * [--sizes 1000,10000,30000,100000] [--queries 50] [--rounds 1]
 * [--ask-per-second 1] [--replay true] [--modes dense,cogito,cogito:push_epsilon=1e-5,...] [--out FILE] [--plot FILE.png]}; a mode with
 * parameters is timed as a variant of its own, side by side with the others.
 */
public final class ScaleBenchmark {

    static final String NS = "scale";
    private static final List<String> MODES =
            List.of("dense", "bm25", "fusion", "cogito", "pabd", "como", "gem", "hybrid");

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
                "--replay",
                "--replot",
                "--rounds",
                "--sizes");
        if (opts.containsKey("--replot")) { // the plot of an earlier run's results, without running it again
            ScalePlot.replot(Path.of(opts.get("--replot")), Path.of(opts.getOrDefault("--plot", "scale.png")));
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
        // copies after the first made from the recorded understandings of the base documents, not read and understood
        // again (UnderstandingReplay says what that skips)
        boolean replay = Boolean.parseBoolean(opts.getOrDefault("--replay", "false"));

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
        CopyNames names = new CopyNames(CorpusCopies.commonWords(base));

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
        result.put("copies", replay ? "replayed understandings of the base documents" : "read and understood");
        List<Map<String, Object>> bySize = new ArrayList<>();
        boolean shared = false; // whether other processes took a share of the machine at some size
        boolean unmeasured = false; // whether that could not be measured at some size (no /proc)
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
            String understandings = service.topics().understandings().name();
            UnderstandingReplay recorded = null;
            HttpClient http = HttpClient.newHttpClient();
            int copy = 0;
            int next = 0; // next document of the current copy
            int sent = 0;
            long passages = 0;
            int previousSize = 0;
            for (int size : sizes) {
                // grow to the size, asking questions meanwhile (after the first size)
                IngestAsker asker = previousSize == 0 ? null : new IngestAsker(baseUrl, asked, askPerSecond);
                Thread asking = asker == null
                        ? null
                        : Thread.ofPlatform().name("scale-asker").start(asker);
                long t0 = System.nanoTime();
                Optional<MachineShare.Sample> growing = MachineShare.sample();
                int sentBefore = sent;
                double[] buildsBefore = ScaleRequests.snapshotBuilds(http, baseUrl, false);
                double[] recentBefore = ScaleRequests.snapshotBuilds(http, baseUrl, true);
                while (passages < size) {
                    int batch = Math.max(20, (int) Math.min(2000, (size - passages) / 2));
                    for (int i = 0; i < batch; i++) {
                        JsonNode doc = base.get(next);
                        if (copy == 0 || !replay) {
                            Corpus.send(producer, topic, NS, copy == 0 ? doc : CorpusCopies.renamed(doc, copy, names));
                        } else {
                            if (recorded == null) { // the base documents in memory: their understandings are complete
                                producer.flush();
                                IngestBenchmark.awaitVerified(baseUrl, NS, sent, Duration.ofHours(2));
                                recorded = UnderstandingReplay.record(
                                        broker.bootstrapServers(), understandings, NS, names);
                                System.err.printf(
                                        "recorded the understandings of %d documents%n", recorded.documents());
                            }
                            for (JsonNode event : recorded.copy(
                                    doc.path("doc_id").asText(),
                                    doc.path("text").asText(),
                                    copy)) {
                                producer.send(new ProducerRecord<>(
                                        understandings, NS, Json.mapper().writeValueAsBytes(event)));
                            }
                        }
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
                double[] buildsAfter = ScaleRequests.snapshotBuilds(http, baseUrl, false);
                double[] recentAfter = ScaleRequests.snapshotBuilds(http, baseUrl, true);
                // a snapshot serves for a while after the namespace moved on (GraphLoader): how long after the last
                // write a query, asked every second, is answered from the namespace as it is now; the modes are
                // timed on the namespace at this size, not on a snapshot of it from earlier in the ingest
                double[] caughtUp = ScaleRequests.awaitCurrentSnapshot(http, baseUrl, asked.get(0));
                Map<String, Object> mem = ProcessFootprint.memory(
                        passages,
                        state,
                        embedder.heapBytes() + names.heapBytes() + (recorded == null ? 0 : recorded.heapBytes()));
                mem.put("documents", sent);
                mem.put("ingest_documents_per_s", (sent - sentBefore) / ingestSeconds);
                mem.put("ingest_passages_per_s", (passages - previousSize) / ingestSeconds);
                mem.put("snapshot_current", caughtUp[1] >= 0);
                mem.put("catch_up_seconds", Math.abs(caughtUp[0]));
                mem.put("whole_catch_up_seconds", Math.abs(caughtUp[1]));
                long builds = Math.round(buildsAfter[1] - buildsBefore[1]);
                mem.put("snapshot_builds_while_growing", builds);
                mem.put("snapshot_build_mean_seconds", builds == 0 ? 0 : (buildsAfter[0] - buildsBefore[0]) / builds);
                mem.put("snapshot_build_recent_max_seconds", buildsAfter[2]);
                long recentBuilds = Math.round(recentAfter[1] - recentBefore[1]);
                mem.put("recent_layer_builds_while_growing", recentBuilds);
                mem.put(
                        "recent_layer_build_mean_seconds",
                        recentBuilds == 0 ? 0 : (recentAfter[0] - recentBefore[0]) / recentBuilds);
                memory.add(mem);
                writePartial(
                        opts, finished(result, shared, unmeasured, bySize, underIngest, queryEmbedding, memory, false));
                // every mode warmed up before any is timed (the snapshot, its indexes, the JIT), then the modes take
                // turns on each question, so that no mode is timed colder than another or in a quieter moment; the
                // work the ingest left behind (compactions) done first, so that the latency is that of the namespace
                // at this size and not of its last writes (under_ingest is that)
                double settled = ProcessFootprint.settle();
                for (String mode : modes) {
                    for (String q : asked.subList(0, Math.min(5, asked.size()))) {
                        ScaleRequests.retrieve(http, baseUrl, mode, q);
                    }
                }
                settled += ProcessFootprint.settle();
                mem.put("settle_seconds", settled);
                Map<String, List<Double>> timed = new LinkedHashMap<>();
                Optional<MachineShare.Sample> timing = MachineShare.sample();
                for (int round = 0; round < rounds; round++) {
                    for (String q : asked) {
                        for (String mode : modes) {
                            timed.computeIfAbsent(mode, m -> new ArrayList<>())
                                    .add(ScaleRequests.retrieve(http, baseUrl, mode, q));
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
                // other processes' work on the machine while this size grew and was timed: a run that shared it
                // says so, its timings being no comparison with one that had it alone
                Optional<MachineShare.Sample> done = MachineShare.sample();
                if (growing.isEmpty() || timing.isEmpty() || done.isEmpty()) {
                    unmeasured = true; // the run cannot say it had the machine alone at this size
                } else {
                    double whileGrowing = MachineShare.othersCores(growing.get(), timing.get());
                    double whileTimed = MachineShare.othersCores(timing.get(), done.get());
                    mem.put("others_cpu_cores_while_growing", whileGrowing);
                    mem.put("others_cpu_cores_while_timed", whileTimed);
                    if (Math.max(whileGrowing, whileTimed) > MachineShare.SHARED_CORES) {
                        shared = true;
                        System.err.printf(
                                "%d passages: other processes kept %.2f cores busy while the namespace grew and %.2f"
                                        + " while the modes were timed: these figures are no comparison with a run"
                                        + " alone%n",
                                passages, whileGrowing, whileTimed);
                    }
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
                writePartial(
                        opts, finished(result, shared, unmeasured, bySize, underIngest, queryEmbedding, memory, false));
            }
        } finally {
            deleteTree(state);
        }
        String json = Json.mapper()
                .writerWithDefaultPrettyPrinter()
                .writeValueAsString(
                        finished(result, shared, unmeasured, bySize, underIngest, queryEmbedding, memory, true));
        System.out.println(json);
        if (opts.containsKey("--out")) {
            Files.writeString(Path.of(opts.get("--out")), json + "\n");
        }
        if (opts.containsKey("--plot")) {
            ScalePlot.plot(bySize, modes, Path.of(opts.get("--plot")));
        }
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
     * Writes what is measured so far to {@code --out}, if given: a run stopped before its end keeps the sizes it reached
     * (their memory and catch-up as soon as they are read, their latencies once they are timed).
     */
    private static void writePartial(Map<String, String> opts, Map<String, Object> partial) throws IOException {
        if (opts.containsKey("--out")) {
            Files.writeString(
                    Path.of(opts.get("--out")),
                    Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(partial) + "\n");
        }
    }

    /**
     * The run's figures as its JSON gives them: what it was asked and measured, whether it had the machine alone, and
     * {@code complete} once every size was reached (false in what a run writes after each size).
     */
    private static Map<String, Object> finished(
            Map<String, Object> asked,
            boolean shared,
            boolean unmeasured,
            List<Map<String, Object>> bySize,
            List<Map<String, Object>> underIngest,
            List<Map<String, Object>> queryEmbedding,
            List<Map<String, Object>> memory,
            boolean complete) {
        Map<String, Object> result = new LinkedHashMap<>(asked);
        result.put("complete", complete);
        // true where it shared the machine at some size; null where it could not tell
        result.put("machine_shared", shared ? Boolean.TRUE : unmeasured ? null : Boolean.FALSE);
        result.put("by_size", bySize);
        result.put("under_ingest", underIngest);
        result.put("query_embedding", queryEmbedding);
        result.put("memory", memory);
        result.put(
                "goals",
                Map.of("offline_p99_vs_dense_p99_at_most", 3.0, "graph_modes_10k_to_100k", "sublinear growth of p99"));
        result.put("p99_vs_dense", ratios(bySize));
        return result;
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
