package dev.engram.service.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Evaluation corpora ({@code corpus.jsonl}: {@code {"doc_id", "title", "text"}} per line, with optional {@code
 * metadata} and {@code event_time} sent as the event's own) and their ingestion.
 */
public final class Corpus {

    private Corpus() {}

    /** The JSON lines of a file, blank lines skipped, at most {@code limit}. */
    public static List<JsonNode> read(Path file, int limit) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank() && out.size() < limit) {
                out.add(Json.mapper().readTree(line));
            }
        }
        return out;
    }

    /** Produces every corpus line as an upsert of document {@code doc_id} in {@code namespace}. */
    public static void produce(String bootstrap, String topic, String namespace, List<JsonNode> corpus) {
        try (KafkaProducer<String, byte[]> producer = producer(bootstrap)) {
            for (JsonNode d : corpus) {
                send(producer, topic, namespace, d);
            }
            producer.flush();
        }
    }

    /** A producer of document events. */
    public static KafkaProducer<String, byte[]> producer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    /** Sends one corpus line as an upsert of document {@code doc_id} in {@code namespace}; done once acknowledged. */
    public static Future<RecordMetadata> send(
            KafkaProducer<String, byte[]> producer, String topic, String namespace, JsonNode d) {
        String id = d.path("doc_id").asText();
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("namespace", namespace);
        event.put("id", id);
        event.put("op", "upsert");
        event.put("title", d.path("title").asText());
        event.put("text", d.path("text").asText());
        // a conversation's turn carries its speaker, session and time: sent as the event's own
        if (d.path("metadata").isObject()) {
            event.put("metadata", d.path("metadata"));
        }
        if (d.path("event_time").isTextual()) {
            event.put("event_time", d.path("event_time").asText());
        }
        return producer.send(new ProducerRecord<>(topic, id, Json.toBytes(event)));
    }
}
