package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.service.cli.Corpus;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.QdrantStandIn;
import dev.engram.understanding.Understander;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The sink benchmark's faults, through the service with both mirrors: Neo4j stops a third of the way through the
 * replay, documents are updated and deleted while it is away, Qdrant fails a few calls, and Neo4j comes back;
 * {@code converge_seconds} is the time from its return until the consistency endpoint finds no drift, and
 * {@code drift_after_faults} what it still finds at the end.
 */
final class SinkFaults {

    private SinkFaults() {}

    /** Runs the faults against a service started from {@code env}, and puts what they cost into {@code result}. */
    static void run(
            Map<String, String> env,
            Understander understander,
            EmbeddedKafkaBroker broker,
            Neo4jProcess neo4j,
            QdrantStandIn qdrant,
            List<JsonNode> corpus,
            Map<TopicPartition, Long> last,
            Map<String, Object> result)
            throws Exception {
        try (EngramService service = EngramService.start(EngramConfig.local(env), understander);
                Neo4jMirror graph = SinkBenchmark.graph(neo4j);
                KafkaProducer<String, byte[]> producer = Corpus.producer(broker.bootstrapServers())) {
            SinkBenchmark.await(service);
            String mirror = service.topics().mirror().name();
            String group = SinkBenchmark.APP + "-mirror";
            long total = last.values().stream().mapToLong(v -> v + 1).sum();
            // Neo4j goes away a third of the way through the replay
            while (last.keySet().stream()
                            .mapToLong(tp -> Math.max(
                                    0,
                                    graph.position(group, mirror, tp.partition())
                                            .graph()))
                            .sum()
                    < total / 3) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
            neo4j.stop();
            // memory moves on while it is away: updates and deletes, and Qdrant fails a few calls
            int changed = Math.min(5, corpus.size() / 4);
            String documents = service.topics().documents().name();
            for (int i = 0; i < changed; i++) {
                ObjectNode d = corpus.get(i).deepCopy();
                d.put("text", d.path("text").asText() + " It was revised later.");
                Corpus.send(producer, documents, SinkBenchmark.NS, d);
                String deleted =
                        corpus.get(corpus.size() - 1 - i).path("doc_id").asText();
                producer.send(new ProducerRecord<>(
                        documents,
                        deleted,
                        Json.toBytes(Map.of("namespace", SinkBenchmark.NS, "id", deleted, "op", "delete"))));
            }
            producer.flush();
            qdrant.failNext.set(6);
            IngestBenchmark.awaitVerified(
                    SinkBenchmark.base(service), SinkBenchmark.NS, corpus.size() - changed, Duration.ofMinutes(10));
            TimeUnit.SECONDS.sleep(2);
            neo4j.start();
            long t0 = System.nanoTime();
            HttpClient http = HttpClient.newHttpClient();
            long deadline = t0 + TimeUnit.MINUTES.toNanos(10);
            JsonNode report = null;
            while (System.nanoTime() < deadline) {
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create(SinkBenchmark.base(service) + "/v1/namespaces/"
                                        + SinkBenchmark.NS + "/consistency"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    report = Json.mapper().readTree(r.body());
                    if (report.path("consistent").asBoolean()) {
                        break;
                    }
                }
                TimeUnit.MILLISECONDS.sleep(250);
            }
            result.put("converge_seconds", (System.nanoTime() - t0) / 1e9);
            result.put(
                    "drift_after_faults",
                    report == null ? -1 : report.path("drifting").asLong());
            result.put(
                    "faults",
                    "Neo4j stopped mid-replay; " + changed + " updates and " + changed
                            + " deletes while it was away; 6 failed Qdrant calls");
        }
    }
}
