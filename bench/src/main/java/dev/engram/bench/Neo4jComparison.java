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
import dev.engram.sinks.Neo4jServer;
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
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Record;
import org.neo4j.driver.Session;

/**
 * The same memory graph queried two ways, on the same questions: Engram's {@code fusion} mode over its own stores
 * (over HTTP, the query embedded by the service), and RAGA-style retrieval over the Neo4j the service mirrors its
 * memory to, through the official driver (the query embedded with the same model, vector recall from a Neo4j vector
 * index, a one-hop Cypher expansion over the mentioned entities, reciprocal rank fusion, the top passages' texts
 * read back). Both follow RAGA §3.6 with the same parameters as {@code fusion}'s defaults: 100 vector candidates, the
 * first 10 as seeds, entities of 2 to 50 passages, each weighing the seed's reciprocal rank over the log of its
 * degree, rank fusion with k = 60.
 *
 * <p>Neo4j runs in this JVM (GPLv3: the benchmark is never shipped), as Engram does. The passages' vectors are not
 * part of the graph mirror (they go to Qdrant), so the benchmark writes them onto the mirrored passages and creates
 * the vector index and an index on the entities' resolved id, as a user querying the mirror this way would.
 *
 * <p>Usage: {@code ./engram bench neo4j [--data DIR] [--docs N] [--queries N] [--out FILE]}; prints one JSON object
 * with each side's p50 and p99 latency, their ratios (Neo4j over Engram), the overlap of the two top-5 lists and each
 * side's recall@5 of the questions' gold documents (by title).
 */
public final class Neo4jComparison {

    private static final String NS = "bench";
    private static final String INDEX = "engram_bench_passage_embedding";
    private static final int K1 = 100;
    private static final int SEEDS = 10;
    private static final int MAX_ENTITY_PASSAGES = 50;
    private static final double RRF_K = 60;
    private static final int TOP_K = 5;
    private static final int WARMUP = 10;

    private static final String VECTOR_RECALL = "CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score"
            + " WHERE node.namespace = $ns RETURN node.id AS id ORDER BY score DESC";
    private static final String EXPANSION = "UNWIND range(0, size($seeds) - 1) AS i"
            + " MATCH (:Passage {namespace: $ns, id: $seeds[i]})-[:MENTIONS]->(m:Entity)"
            + " WITH DISTINCT i, m.resolvedId AS entity"
            + " MATCH (:Entity {namespace: $ns, resolvedId: entity})<-[:MENTIONS]-(o:Passage)"
            + " WITH i, entity, collect(DISTINCT o.id) AS reached"
            + " WHERE size(reached) >= 2 AND size(reached) <= $maxLinks"
            + " UNWIND reached AS o"
            + " RETURN o AS id, sum((1.0 / (i + 1)) / log(1 + size(reached))) AS score"
            + " ORDER BY score DESC, id";
    private static final String READ_BACK = "UNWIND $ids AS id MATCH (p:Passage {namespace: $ns, id: id})"
            + " RETURN p.id AS id, p.title AS title, p.text AS text";

    private Neo4jComparison() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts =
                BenchOptions.parse("neo4j", args, "--data", "--docs", "--out", "--port", "--queries");
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/hotpotqa-train100"));
        int docs = Integer.parseInt(opts.getOrDefault("--docs", "100000"));
        int queries = Integer.parseInt(opts.getOrDefault("--queries", "100"));
        List<JsonNode> corpus = Corpus.read(data.resolve("corpus.jsonl"), docs);
        List<JsonNode> questions = Corpus.read(data.resolve("questions.jsonl"), queries);
        Path state = Files.createTempDirectory("engram-bench-neo4j-");
        Neo4jServer neo4j = Neo4jServer.shared();
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("ENGRAM_STATE_DIR", state.toString());
        env.put("ENGRAM_APPLICATION_ID", "engram-bench-neo4j");
        env.put("ENGRAM_HTTP_PORT", opts.getOrDefault("--port", "18085"));
        env.put("ENGRAM_NEO4J_URI", neo4j.uri());
        env.put("ENGRAM_NEO4J_USER", "");
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("dataset", data.getFileName().toString());
        result.put("documents", corpus.size());
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Understander understander = UnderstanderFactory.create(EngramConfig.local(env), Meters.detached());
                Driver driver = GraphDatabase.driver(neo4j.uri(), AuthTokens.none())) {
            env.put("ENGRAM_BOOTSTRAP_SERVERS", broker.bootstrapServers());
            try (EngramService service = EngramService.start(EngramConfig.local(env), understander)) {
                if (!service.awaitRunning(Duration.ofMinutes(2))) {
                    throw new IllegalStateException("service did not start");
                }
                String base = "http://localhost:" + service.httpPort();
                Corpus.produce(
                        broker.bootstrapServers(), service.topics().documents().name(), NS, corpus);
                JsonNode stats = IngestBenchmark.awaitVerified(base, NS, corpus.size(), Duration.ofMinutes(60));
                awaitConsistent(base, Duration.ofMinutes(10));
                result.put("passages", stats.path("passages").asLong());
                int dimensions = vectorsOntoPassages(
                        driver,
                        SinkBenchmark.readMirror(
                                broker.bootstrapServers(), service.topics(), new HashMap<TopicPartition, Long>()));
                try (Session s = driver.session()) {
                    // the dimension is the embedder's (a number of this program), never text from outside
                    s.run("CREATE VECTOR INDEX " + INDEX + " IF NOT EXISTS FOR (p:Passage) ON p.embedding OPTIONS"
                                    + " {indexConfig: {`vector.dimensions`: " + dimensions
                                    + ", `vector.similarity_function`: 'cosine'}}")
                            .consume();
                    s.run("CREATE INDEX engram_bench_resolved IF NOT EXISTS FOR (e:Entity) ON (e.namespace,"
                                    + " e.resolvedId)")
                            .consume();
                    s.run("CALL db.awaitIndexes(600)").consume();
                }
                compare(base, driver, understander, questions, result);
            }
        } finally {
            neo4j.stop();
            ScaleBenchmark.deleteTree(state);
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        System.out.println(json);
        if (opts.containsKey("--out")) {
            Files.writeString(Path.of(opts.get("--out")), json + "\n");
        }
    }

    private static void compare(
            String base, Driver driver, Understander understander, List<JsonNode> questions, Map<String, Object> result)
            throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        List<Double> engramMs = new ArrayList<>();
        List<Double> neo4jMs = new ArrayList<>();
        double overlap = 0;
        int engramHits = 0;
        int neo4jHits = 0;
        int golds = 0;
        int asked = 0;
        // the first questions are asked once more before the others, unmeasured: snapshot, indexes and JIT warm up
        for (int q = -Math.min(WARMUP, questions.size()); q < questions.size(); q++) {
            JsonNode asking = questions.get(q < 0 ? q + Math.min(WARMUP, questions.size()) : q);
            String question = asking.path("question").asText();
            List<Hit> engram = List.of();
            List<Hit> graph = List.of();
            double engramTook = 0;
            double neo4jTook = 0;
            // each side goes first on every other question
            for (boolean engramTurn :
                    Math.floorMod(q, 2) == 0 ? new boolean[] {true, false} : new boolean[] {false, true}) {
                long t0 = System.nanoTime();
                if (engramTurn) {
                    engram = engram(http, base, question);
                    engramTook = (System.nanoTime() - t0) / 1e6;
                } else {
                    graph = raga(driver, understander.embedder().embed(question));
                    neo4jTook = (System.nanoTime() - t0) / 1e6;
                }
            }
            if (q < 0) {
                continue;
            }
            asked++;
            engramMs.add(engramTook);
            neo4jMs.add(neo4jTook);
            Set<String> both = ids(engram);
            both.retainAll(ids(graph));
            Set<String> either = ids(engram);
            either.addAll(ids(graph));
            overlap += either.isEmpty() ? 1 : (double) both.size() / either.size();
            for (JsonNode gold : asking.path("gold_docs")) {
                String title = gold.asText().split("\n", 2)[0].strip();
                golds++;
                engramHits += engram.stream().anyMatch(h -> h.title().equals(title)) ? 1 : 0;
                neo4jHits += graph.stream().anyMatch(h -> h.title().equals(title)) ? 1 : 0;
            }
        }
        engramMs.sort(null);
        neo4jMs.sort(null);
        double engramP50 = FreshnessBenchmark.quantile(engramMs, 0.5);
        double engramP99 = FreshnessBenchmark.quantile(engramMs, 0.99);
        double neo4jP50 = FreshnessBenchmark.quantile(neo4jMs, 0.5);
        double neo4jP99 = FreshnessBenchmark.quantile(neo4jMs, 0.99);
        result.put("queries", asked);
        result.put("engram_fusion_p50_ms", engramP50);
        result.put("engram_fusion_p99_ms", engramP99);
        result.put("neo4j_raga_p50_ms", neo4jP50);
        result.put("neo4j_raga_p99_ms", neo4jP99);
        result.put("latency_ratio_p50", neo4jP50 / engramP50);
        result.put("latency_ratio_p99", neo4jP99 / engramP99);
        result.put("top5_overlap", overlap / Math.max(1, asked));
        result.put("engram_recall_at_5", 100.0 * engramHits / Math.max(1, golds));
        result.put("neo4j_recall_at_5", 100.0 * neo4jHits / Math.max(1, golds));
    }

    /** A passage retrieved: its id and its document's title. */
    record Hit(String id, String title) {}

    private static Set<String> ids(List<Hit> hits) {
        Set<String> out = new HashSet<>();
        hits.forEach(h -> out.add(h.id()));
        return out;
    }

    /** Engram's fusion over HTTP; its top passages, in rank order. */
    private static List<Hit> engram(HttpClient http, String base, String question) throws Exception {
        String body = Json.toString(Map.of("query", question, "mode", "fusion", "top_k", TOP_K));
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + NS + "/retrieve"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("retrieve answered " + r.statusCode() + ": " + r.body());
        }
        List<Hit> hits = new ArrayList<>();
        for (JsonNode p : Json.mapper().readTree(r.body()).path("results")) {
            hits.add(new Hit(p.path("passage_id").asText(), p.path("title").asText()));
        }
        return hits;
    }

    /**
     * RAGA-style retrieval over the mirrored graph in one read transaction: vector recall, one-hop expansion, rank
     * fusion, then the top passages read back; the top passages, in rank order.
     */
    static List<Hit> raga(Driver driver, float[] query) {
        List<Double> vector = doubles(query);
        try (Session s = driver.session()) {
            return s.executeRead(tx -> {
                List<String> nearest = tx.run(
                                VECTOR_RECALL, Map.of("index", INDEX, "k", K1, "vector", vector, "ns", NS))
                        .list(r -> r.get("id").asString());
                List<String> seeds = nearest.subList(0, Math.min(SEEDS, nearest.size()));
                List<String> expanded = tx.run(
                                EXPANSION, Map.of("seeds", seeds, "ns", NS, "maxLinks", MAX_ENTITY_PASSAGES))
                        .list(r -> r.get("id").asString());
                Map<String, Double> fused = new HashMap<>();
                for (int i = 0; i < nearest.size(); i++) {
                    fused.merge(nearest.get(i), 1 / (RRF_K + i + 1), Double::sum);
                }
                for (int i = 0; i < expanded.size(); i++) {
                    fused.merge(expanded.get(i), 1 / (RRF_K + i + 1), Double::sum);
                }
                List<String> top = fused.entrySet().stream()
                        .sorted(Map.Entry.<String, Double>comparingByValue()
                                .reversed()
                                .thenComparing(Map.Entry.comparingByKey()))
                        .limit(TOP_K)
                        .map(Map.Entry::getKey)
                        .toList();
                Map<String, String> titles = new HashMap<>();
                for (Record r : tx.run(READ_BACK, Map.of("ids", top, "ns", NS)).list()) {
                    titles.put(r.get("id").asString(), r.get("title").asString());
                }
                return top.stream()
                        .map(id -> new Hit(id, titles.getOrDefault(id, "")))
                        .toList();
            });
        }
    }

    /** Writes each passage's vector (its latest mirror record's) onto its node; returns their dimension. */
    private static int vectorsOntoPassages(Driver driver, List<MirrorRecord> records) {
        Map<String, float[]> latest = new LinkedHashMap<>();
        for (MirrorRecord r : records) {
            if (r.kind() == MirrorRecord.Kind.PASSAGE) {
                if (r.object() instanceof MirrorRecord.Passage p && p.vector() != null) {
                    latest.put(r.id(), p.vector());
                } else {
                    latest.remove(r.id());
                }
            }
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        int dimensions = 0;
        try (Session s = driver.session()) {
            for (Map.Entry<String, float[]> e : latest.entrySet()) {
                List<Double> v = doubles(e.getValue());
                dimensions = v.size();
                rows.add(Map.of("id", e.getKey(), "v", v));
                if (rows.size() == 500) {
                    setVectors(s, rows);
                    rows.clear();
                }
            }
            setVectors(s, rows);
        }
        return dimensions;
    }

    /** A vector as the list of floats Neo4j stores and compares. */
    private static List<Double> doubles(float[] v) {
        List<Double> out = new ArrayList<>(v.length);
        for (float x : v) {
            out.add((double) x);
        }
        return out;
    }

    private static void setVectors(Session s, List<Map<String, Object>> rows) {
        if (!rows.isEmpty()) {
            s.executeWrite(tx -> tx.run(
                            "UNWIND $rows AS r MATCH (p:Passage {namespace: $ns, id: r.id}) SET p.embedding = r.v",
                            Map.of("rows", rows, "ns", NS))
                    .consume());
        }
    }

    private static void awaitConsistent(String base, Duration timeout) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + NS + "/consistency"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200
                    && Json.mapper().readTree(r.body()).path("consistent").asBoolean()) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new IllegalStateException("the Neo4j mirror did not catch up within " + timeout);
    }
}
