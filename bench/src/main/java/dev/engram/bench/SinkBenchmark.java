package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorRecord;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.app.UnderstanderFactory;
import dev.engram.service.cli.Corpus;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.QdrantStandIn;
import dev.engram.sinks.RawMerge;
import dev.engram.topology.Topics;
import dev.engram.understanding.Understander;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The mirror sink against its physical limit, and its convergence after faults, in one run on loopback:
 *
 * <ol>
 *   <li>a corpus is ingested by the service without mirrors, which leaves the mirror topic full;
 *   <li>a mirror sink replays that topic into an empty in-process Neo4j: {@code changes_per_s}, from the sink's first
 *       records until Neo4j records its position past the last record (its start-up apart:
 *       {@code startup_seconds_median}, {@code changes_per_s_with_startup});
 *   <li>the same rows, in the same batches, are written into an empty Neo4j with plain {@code UNWIND … MERGE}
 *       ({@link RawMerge}): {@code raw_merge_per_s}, and {@code ratio} = sink / raw throughput (the goal is at least 0.8); and
 *       with the sink's own statements without Kafka: {@code model_merge_per_s}, and the sink's own graph writes
 *       without Kafka: {@code mirror_apply_per_s}. Each of them starts from an empty store (Neo4j restarted on its
 *       emptied directory, schema online). In rounds ({@code --rounds}, 5): the first warms up; in each of the others the sink
 *       and the raw writes take turns at going first, and {@code ratio} is the median of the rounds' ratios
 *       ({@code ratio_of_bests} compares the best times); a third contestant, taking turns with them, merges the same
 *       graph as plainly with its links ({@link RawMerge#writeWithLinks}): {@code raw_with_links_per_s} and {@code
 *       ratio_vs_raw_with_links};
 *   <li>the service starts again with both mirrors (Neo4j and the Qdrant stand-in) on an emptied Neo4j; while its sink
 *       replays, Neo4j is stopped, documents are updated and deleted, Qdrant fails a few calls, and Neo4j comes back:
 *       {@code converge_seconds} is the time from Neo4j's return until the consistency endpoint finds no drift, and
 *       {@code drift_after_faults} what it still finds at the end (the goal is 0).
 * </ol>
 *
 * Neo4j runs in this JVM (GPLv3: the benchmark is never shipped); Qdrant is the protocol stand-in of the tests. Prints
 * one JSON object. Usage: {@code SinkBenchmark [--data DIR] [--docs 600] [--batch 500] [--rounds 5]
 * [--neo4j-pagecache-mb 256] [--out FILE] [--profile true]}; with {@code --profile true} it profiles the three writers'
 * statements instead (database hits per element and operator, on standard error) and prints no JSON.
 */
public final class SinkBenchmark {

    static final String NS = "sinks";
    static final String APP = "engram-bench-sinks";

    private SinkBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse(
                "sinks",
                args,
                "--batch",
                "--data",
                "--docs",
                "--neo4j-heap-mb",
                "--neo4j-pagecache-mb",
                "--neo4j-process",
                "--out",
                "--port",
                "--profile",
                "--rounds");
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/musique-train100"));
        int docs = Integer.parseInt(opts.getOrDefault("--docs", "600"));
        int batch = Integer.parseInt(opts.getOrDefault("--batch", "500"));
        int rounds = Integer.parseInt(opts.getOrDefault("--rounds", "5"));
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), docs);
        Path state = Files.createTempDirectory("engram-bench-sinks-");
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("ENGRAM_STATE_DIR", state.toString());
        env.put("ENGRAM_APPLICATION_ID", APP);
        env.put("ENGRAM_HTTP_PORT", opts.getOrDefault("--port", "18082"));
        env.put("ENGRAM_SINK_BATCH_SIZE", Integer.toString(batch));
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("dataset", data.getFileName().toString());
        result.put("documents", corpus.size());
        result.put("batch_size", batch);
        result.put("rounds", rounds);

        // a page cache that holds the store, as a Neo4j sized for its data has
        System.setProperty("engram.neo4j.pagecache.mb", opts.getOrDefault("--neo4j-pagecache-mb", "256"));
        // in this JVM (the default), or in one of its own (--neo4j-process true), as users run Neo4j
        boolean ownJvm = Boolean.parseBoolean(opts.getOrDefault("--neo4j-process", "false"));
        result.put("neo4j_jvm", ownJvm ? "its own" : "the benchmark's");
        Neo4jProcess neo4j = ownJvm
                ? Neo4jProcess.ownJvm(Integer.parseInt(opts.getOrDefault("--neo4j-heap-mb", "1024")))
                : Neo4jProcess.inThisJvm();
        QdrantStandIn qdrant = new QdrantStandIn();
        ServerBuilder<?> grpc = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
        qdrant.services().forEach(grpc::addService);
        Server qdrantServer = grpc.build().start();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander = UnderstanderFactory.create(EngramConfig.local(env), Meters.detached())) {
            env.put("ENGRAM_BOOTSTRAP_SERVERS", broker.bootstrapServers());

            // 1. fill the mirror topic
            Topics topics;
            try (EngramService service = EngramService.start(EngramConfig.local(env), understander)) {
                await(service);
                topics = service.topics();
                Corpus.produce(broker.bootstrapServers(), topics.documents().name(), NS, corpus);
                IngestBenchmark.awaitVerified(base(service), NS, corpus.size(), Duration.ofMinutes(30));
            }
            Map<TopicPartition, Long> last = new HashMap<>();
            List<MirrorRecord> records = readMirror(broker.bootstrapServers(), topics, last);
            result.put("mirror_records", records.size());
            System.err.printf("mirror topic: %d records%n", records.size());

            if (Boolean.parseBoolean(opts.getOrDefault("--profile", "false"))) {
                profile(neo4j, records, batch);
                return;
            }

            // 2 and 3. the sink alone into an empty Neo4j, and the same rows raw and with the sink's statements, in
            // rounds: the first warms up. The machine is shared with the broker and Neo4j, so the sink and the raw
            // writes are compared within each round (taking turns at going first), and the median of those ratios
            // counts
            double sinkSeconds = Double.MAX_VALUE;
            double rawSeconds = Double.MAX_VALUE;
            double modelSeconds = Double.MAX_VALUE;
            double applySeconds = Double.MAX_VALUE;
            double sinkWithStartup = Double.MAX_VALUE;
            List<Double> startups = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            double linkedSeconds = Double.MAX_VALUE;
            List<Double> linkedRatios = new ArrayList<>();
            for (int round = 0; round < Math.max(2, rounds); round++) {
                SinkReplay sink = new SinkReplay(Double.NaN, 0, Map.of());
                // the positions the sink and its graph writes without Kafka move
                Map<String, String> positions =
                        Map.of("bench-replay-" + round, topics.mirror().name(), "bench-apply-" + round, "bench");
                double plain = 0;
                double linked = 0;
                Map<String, Long> rawNanos = new TreeMap<>();
                // the three take turns at going first
                String[] turns = {"sink", "raw", "raw with links"};
                for (int turn = 0; turn < turns.length; turn++) {
                    String contestant = turns[(turn + round) % turns.length];
                    empty(neo4j);
                    plan(neo4j, records, batch, positions);
                    CpuShares cpu = new CpuShares();
                    cpu.start();
                    Map<String, Double> spent;
                    if (contestant.equals("sink")) {
                        sink = SinkReplay.run(
                                broker, topics, neo4j, batch, last, records.size(), "bench-replay-" + round, cpu);
                        spent = sink.cpu();
                    } else {
                        try (RawMerge raw = new RawMerge(neo4j.uri())) {
                            long t0 = System.nanoTime();
                            if (contestant.equals("raw")) {
                                raw.write(records, batch, rawNanos);
                                plain = (System.nanoTime() - t0) / 1e9;
                            } else {
                                raw.writeWithLinks(records, batch);
                                linked = (System.nanoTime() - t0) / 1e9;
                            }
                        }
                        spent = cpu.secondsByThreadName();
                    }
                    System.err.printf("round %d, %s: CPU seconds by thread %s%n", round, contestant, top(spent, 10));
                }
                empty(neo4j);
                plan(neo4j, records, batch, positions);
                Map<String, Long> nanos = new TreeMap<>();
                double model;
                try (RawMerge raw = new RawMerge(neo4j.uri())) {
                    long t0 = System.nanoTime();
                    raw.writeModel(records, batch, nanos);
                    model = (System.nanoTime() - t0) / 1e9;
                }
                empty(neo4j);
                plan(neo4j, records, batch, positions);
                CpuShares applyCpu = new CpuShares();
                applyCpu.start();
                double apply = applyAlone(neo4j, records, batch, "bench-apply-" + round);
                System.err.printf(
                        "round %d, apply alone: CPU seconds by thread %s%n",
                        round, top(applyCpu.secondsByThreadName(), 10));
                if (round > 0) {
                    sinkSeconds = Math.min(sinkSeconds, sink.streaming());
                    sinkWithStartup = Math.min(sinkWithStartup, sink.seconds());
                    startups.add(sink.startup());
                    rawSeconds = Math.min(rawSeconds, plain);
                    modelSeconds = Math.min(modelSeconds, model);
                    applySeconds = Math.min(applySeconds, apply);
                    ratios.add(plain / sink.streaming());
                    linkedSeconds = Math.min(linkedSeconds, linked);
                    linkedRatios.add(linked / sink.streaming());
                }
                System.err.printf(
                        "round %d: sink %.0f changes/s (%.0f with its start-up), mirror apply %.0f, model %.0f, raw"
                                + " merge %.0f rows/s (ratio %.2f), raw with links %.0f rows/s (ratio %.2f); ms by element:"
                                + " model %s, raw %s%n",
                        round,
                        records.size() / sink.streaming(),
                        records.size() / sink.seconds(),
                        records.size() / apply,
                        records.size() / model,
                        records.size() / plain,
                        plain / sink.streaming(),
                        records.size() / linked,
                        linked / sink.streaming(),
                        millis(nanos),
                        millis(rawNanos));
            }
            Collections.sort(ratios);
            double median = median(ratios);
            result.put("model_merge_per_s", records.size() / modelSeconds);
            result.put("mirror_apply_per_s", records.size() / applySeconds);
            result.put("changes_per_s", records.size() / sinkSeconds);
            result.put("changes_per_s_with_startup", records.size() / sinkWithStartup);
            Collections.sort(startups);
            result.put("startup_seconds_median", startups.get(startups.size() / 2));
            result.put("raw_merge_per_s", records.size() / rawSeconds);
            result.put("ratio", median);
            result.put("ratio_of_bests", rawSeconds / sinkSeconds);
            result.put("ratios", ratios);
            // beside the goal's ratio: the same graph with its links, merged plainly
            Collections.sort(linkedRatios);
            result.put("raw_with_links_per_s", records.size() / linkedSeconds);
            result.put("ratio_vs_raw_with_links", median(linkedRatios));
            result.put("ratios_vs_raw_with_links", linkedRatios);

            // 4. faults, through the service, judged by its consistency endpoint
            empty(neo4j);
            env.put("ENGRAM_NEO4J_URI", neo4j.uri());
            env.put("ENGRAM_NEO4J_USER", "");
            env.put("ENGRAM_QDRANT_URL", "http://localhost:" + qdrantServer.getPort());
            env.put("ENGRAM_QDRANT_COLLECTION_PREFIX", "bench_");
            env.put("ENGRAM_SINK_RETRIES", "2");
            env.put("ENGRAM_SINK_BACKOFF_MS", "100");
            env.put("ENGRAM_SINK_PAUSE_MS", "1000");
            env.put("ENGRAM_MIRROR_REPAIR_INTERVAL_MS", "1000");
            SinkFaults.run(env, understander, broker, neo4j, qdrant, corpus, last, result);
        } finally {
            qdrantServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            neo4j.close();
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        System.out.println(json);
        if (opts.containsKey("--out")) {
            Files.writeString(Path.of(opts.get("--out")), json + "\n");
        }
    }

    /** Every committed record of the mirror topic, in order per partition; {@code last} gets each partition's last offset. */
    static List<MirrorRecord> readMirror(String bootstrap, Topics topics, Map<TopicPartition, Long> last) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 * 1024 * 1024);
        List<MirrorRecord> out = new ArrayList<>();
        try (KafkaConsumer<String, MirrorRecord> consumer = new KafkaConsumer<>(
                props, new StringDeserializer(), topics.mirror().valueSerde().deserializer())) {
            List<TopicPartition> partitions = consumer
                    .partitionsFor(topics.mirror().name())
                    .stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition()))
                    .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, MirrorRecord> r : consumer.poll(Duration.ofMillis(500))) {
                    out.add(r.value());
                    last.merge(new TopicPartition(r.topic(), r.partition()), r.offset(), Math::max);
                }
            }
        }
        return out;
    }

    /**
     * The sink's graph writes without Kafka: the same batches through {@link Neo4jMirror#apply}, each in its own
     * transaction that also moves the position, as the sink writes them; returns the seconds it took.
     */
    private static double applyAlone(Neo4jProcess neo4j, List<MirrorRecord> records, int batch, String group) {
        try (Neo4jMirror graph = graph(neo4j)) {
            long t0 = System.nanoTime();
            for (int i = 0; i < records.size(); i += batch) {
                int end = Math.min(records.size(), i + batch);
                graph.apply(records.subList(i, end), group, "bench", 0, end, true);
            }
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    /**
     * {@code --profile}: the rows written by the plain statements, the plain ones with links and the sink's own, each
     * into an empty Neo4j with every statement profiled; prints, per element, each one's database hits and, for the
     * sink's statements, the operators that make them.
     */
    private static void profile(Neo4jProcess neo4j, List<MirrorRecord> records, int batch) {
        Map<RawMerge.Mode, Map<String, Map<String, long[]>>> byMode = new EnumMap<>(RawMerge.Mode.class);
        for (RawMerge.Mode mode : RawMerge.Mode.values()) {
            empty(neo4j);
            try (RawMerge raw = new RawMerge(neo4j.uri())) {
                byMode.put(mode, raw.profile(records, batch, mode));
            }
        }
        Map<String, Map<String, long[]>> model = byMode.get(RawMerge.Mode.MODEL);
        for (String element : model.keySet()) {
            StringBuilder line = new StringBuilder(element).append(": db hits");
            for (RawMerge.Mode mode : RawMerge.Mode.values()) {
                long hits = byMode.get(mode).getOrDefault(element, Map.of()).values().stream()
                        .mapToLong(h -> h[0])
                        .sum();
                line.append(' ')
                        .append(mode.name().toLowerCase(Locale.ROOT))
                        .append('=')
                        .append(hits);
            }
            System.err.println(line);
            model.get(element)
                    .forEach((operator, h) ->
                            System.err.printf("    model %-40s db hits %9d rows %9d%n", operator, h[0], h[1]));
        }
    }

    private static double median(List<Double> sorted) {
        int mid = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(mid) : (sorted.get(mid - 1) + sorted.get(mid)) / 2;
    }

    /** The first {@code n} entries, in hundredths. */
    private static List<String> top(Map<String, Double> seconds, int n) {
        return seconds.entrySet().stream()
                .limit(n)
                .map(e -> e.getKey() + "=" + Math.round(e.getValue() * 100) / 100.0)
                .toList();
    }

    private static List<String> millis(Map<String, Long> nanos) {
        return nanos.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue() / 1_000_000)
                .toList();
    }

    /**
     * Starts Neo4j again on an empty store with the mirror's constraints and indexes online, so that every contestant
     * writes into the same state: an empty database, as a new mirror meets it. (Emptying the database with deletes
     * instead left freed record ids and index entries behind that slowed whoever wrote first after it.)
     */
    private static void empty(Neo4jProcess neo4j) {
        neo4j.restartEmpty();
        try (Neo4jMirror graph = graph(neo4j)) {
            graph.ensureSchema();
            graph.read("CALL db.awaitIndexes(60)", Map.of());
        }
    }

    /**
     * Has the new, empty Neo4j plan every contestant's statements (see {@link RawMerge#plan}), as a running sink finds
     * them planned: what is timed is writing, not Neo4j's planner on a cold cache.
     */
    private static void plan(Neo4jProcess neo4j, List<MirrorRecord> records, int batch, Map<String, String> positions) {
        long t0 = System.nanoTime();
        try (RawMerge raw = new RawMerge(neo4j.uri())) {
            raw.plan(records, batch, positions);
        }
        System.err.printf("statements planned in %.2f s%n", (System.nanoTime() - t0) / 1e9);
    }

    static Neo4jMirror graph(Neo4jProcess neo4j) {
        return new Neo4jMirror(new Neo4jMirror.Settings(neo4j.uri(), null, null, null, Duration.ofSeconds(30)));
    }

    static String base(EngramService service) {
        return "http://localhost:" + service.httpPort();
    }

    static void await(EngramService service) throws InterruptedException {
        if (!service.awaitRunning(Duration.ofMinutes(2))) {
            throw new IllegalStateException("service did not start");
        }
    }
}
