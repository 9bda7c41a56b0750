package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.TestDocuments;
import dev.engram.topology.Understanders;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committed bad-input corpus ({@code bad-input/cases.jsonl}: malformed, wrong types, missing and extra fields,
 * unknown ops, empty and huge text, invalid UTF-8, control characters, deep nesting, giant arrays, null keys and
 * values, keys that are not the id, repeated and out-of-order events, hostile titles, unicode tricks, text at the size
 * limit built to make a backtracking pattern take quadratic time) through the real
 * broker, one record at a time: each case ends as its expected outcome, a valid document produced after each case
 * becomes VERIFIED (nothing stalls), and every record produced is counted as processed or dead-lettered.
 */
@ExtendWith(SharedKafkaBroker.class)
class BadInputCorpusIT {

    private static final String NS = "bad";
    private static final Pattern DOCUMENTS =
            Pattern.compile("engram_documents_total\\{outcome=\"(\\w+)\"[^}]*} ([0-9.]+)");

    @TempDir
    Path state;

    /** A case of the corpus: the records it produces and what must become of them. */
    private record Case(String name, String expect, List<ProducerRecord<byte[], byte[]>> records) {}

    @Test
    void everyBadInputIsDeadLetteredWithItsCauseOrProcessedAndNothingStalls(EmbeddedKafkaBroker broker)
            throws Exception {
        String id = "corpus-" + UUID.randomUUID().toString().substring(0, 8);
        EngramConfig config = ItSupport.config(broker.bootstrapServers(), id, id + ".", state, 1);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 8 << 20);
        try (EngramService service = EngramService.start(config, Understanders.embedded());
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
            String base = "http://127.0.0.1:" + service.httpPort();
            String topic = service.topics().documents().name();
            List<Case> cases = cases(topic);
            assertThat(cases).hasSizeGreaterThanOrEqualTo(40);

            Map<Long, String> expectedCauseByOffset = new HashMap<>();
            List<String> processedUpserts = new ArrayList<>();
            int produced = 0;
            for (int i = 0; i < cases.size(); i++) {
                Case c = cases.get(i);
                for (ProducerRecord<byte[], byte[]> r : c.records()) {
                    RecordMetadata at = producer.send(r).get(30, TimeUnit.SECONDS);
                    produced++;
                    if (c.expect().startsWith("dead_letter:")) {
                        expectedCauseByOffset.put(at.offset(), c.expect().substring("dead_letter:".length()));
                    }
                }
                if (c.expect().equals("processed")
                        && c.records().get(c.records().size() - 1).value() != null) {
                    JsonNode last = Json.mapper()
                            .readTree(c.records().get(c.records().size() - 1).value());
                    if (last.path("op").asText().equals("upsert")) {
                        processedUpserts.add(last.path("id").asText());
                    }
                }
                String probe = "probe-" + i;
                producer.send(new ProducerRecord<>(
                                topic,
                                probe.getBytes(StandardCharsets.UTF_8),
                                TestDocuments.upsert(NS, probe, "Probe", "Probe " + i + " follows " + c.name() + ".")))
                        .get(30, TimeUnit.SECONDS);
                produced++;
                // nothing stalls: the document after each case is read, understood and in memory
                ItSupport.awaitVerified(base, NS, List.of(probe));
            }

            for (String doc : processedUpserts) {
                ItSupport.awaitVerified(base, NS, List.of(doc));
            }
            List<ConsumerRecord<byte[], DeadLetter>> letters = ItSupport.readCommitted(
                    broker.bootstrapServers(),
                    service.topics().deadLetters().name(),
                    new ByteArrayDeserializer(),
                    service.topics().deadLetters().valueSerde().deserializer(),
                    expectedCauseByOffset.size(),
                    Duration.ofSeconds(30));
            Map<Long, String> actual = letters.stream()
                    .map(ConsumerRecord::value)
                    .filter(l -> l.topic().equals(topic))
                    .collect(Collectors.toMap(DeadLetter::offset, l -> l.cause().wireName()));
            assertThat(actual)
                    .as("one dead letter per bad record, with its cause")
                    .isEqualTo(expectedCauseByOffset);
            assertThat(letters).extracting(r -> Json.toBytes(r.value()).length).allSatisfy(size -> assertThat(size)
                    .isLessThan(1 << 20));

            Map<String, Double> outcomes =
                    documentOutcomes(ItSupport.get(base + "/metrics").raw().body());
            double total =
                    outcomes.values().stream().mapToDouble(Double::doubleValue).sum();
            assertThat(total).as("processed + dead_lettered = produced").isEqualTo(produced);
            assertThat(outcomes.get("dead_lettered")).isEqualTo(expectedCauseByOffset.size());
        }
    }

    private static Map<String, Double> documentOutcomes(String metrics) {
        Map<String, Double> out = new TreeMap<>();
        Matcher m = DOCUMENTS.matcher(metrics);
        while (m.find()) {
            out.merge(m.group(1), Double.parseDouble(m.group(2)), Double::sum); // a series per task
        }
        return out;
    }

    /** The corpus as records to produce. */
    private static List<Case> cases(String topic) throws Exception {
        List<Case> out = new ArrayList<>();
        try (InputStream in = BadInputCorpusIT.class.getResourceAsStream("/bad-input/cases.jsonl")) {
            assertThat(in).as("the bad-input corpus").isNotNull();
            for (String line : new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
                    .lines()
                    .filter(l -> !l.isBlank())
                    .toList()) {
                JsonNode c = Json.mapper().readTree(line);
                out.add(new Case(c.path("name").asText(), c.path("expect").asText(), records(topic, c)));
            }
        }
        return out;
    }

    private static List<ProducerRecord<byte[], byte[]>> records(String topic, JsonNode c) {
        byte[] key = c.has("key_hex")
                ? HexFormat.of().parseHex(c.get("key_hex").asText())
                : c.path("key").isTextual() ? c.get("key").asText().getBytes(StandardCharsets.UTF_8) : null;
        byte[] value;
        if (c.path("null_value").asBoolean()) {
            value = null;
        } else if (c.has("value_hex")) {
            value = HexFormat.of().parseHex(c.get("value_hex").asText());
        } else if (c.has("raw")) {
            value = c.get("raw").asText().getBytes(StandardCharsets.UTF_8);
        } else if (c.has("value")) {
            value = Json.toBytes(c.get("value"));
        } else {
            value = null;
        }
        JsonNode gen = c.path("generate");
        List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>();
        switch (gen.path("kind").asText("")) {
            case "deep_nesting" -> {
                int depth = gen.path("depth").asInt();
                String doc = "{\"namespace\":\"" + NS + "\",\"id\":\""
                        + gen.path("id").asText() + "\",\"op\":\"delete\",\"metadata\":{\"a\":" + "[".repeat(depth)
                        + "]".repeat(depth) + "}}";
                out.add(new ProducerRecord<>(topic, key, doc.getBytes(StandardCharsets.UTF_8)));
            }
            case "large_text" ->
                out.add(new ProducerRecord<>(
                        topic,
                        key,
                        TestDocuments.upsert(
                                NS,
                                gen.path("id").asText(),
                                "Large",
                                "word ".repeat(gen.path("bytes").asInt() / 5))));
            case "giant_array" -> {
                ObjectNode doc = Json.mapper().createObjectNode();
                doc.put("namespace", NS).put("id", gen.path("id").asText()).put("op", "upsert");
                doc.put("text", "A document with a giant array in its metadata.");
                ArrayNode list = doc.putObject("metadata").putArray("list");
                for (int i = 0; i < gen.path("elements").asInt(); i++) {
                    list.add(i);
                }
                out.add(new ProducerRecord<>(topic, key, Json.toBytes(doc)));
            }
            case "repeated_text" -> { // text (and a title) built to make a backtracking pattern take its worst time
                ObjectNode doc = Json.mapper().createObjectNode();
                doc.put("namespace", NS).put("id", gen.path("id").asText()).put("op", "upsert");
                if (gen.has("title_unit")) {
                    doc.put(
                            "title",
                            gen.path("title_unit")
                                    .asText()
                                    .repeat(gen.path("title_times").asInt()));
                }
                doc.put(
                        "text",
                        gen.path("head").asText()
                                + gen.path("unit")
                                        .asText()
                                        .repeat(gen.path("times").asInt())
                                + gen.path("tail").asText());
                out.add(new ProducerRecord<>(topic, key, Json.toBytes(doc)));
            }
            case "twice" -> {
                out.add(new ProducerRecord<>(topic, key, value));
                out.add(new ProducerRecord<>(topic, key, value));
            }
            case "upsert_delete_upsert" -> {
                JsonNode v = c.get("value");
                byte[] delete = Json.toBytes(Map.of(
                        "namespace",
                        v.path("namespace").asText(),
                        "id",
                        v.path("id").asText(),
                        "op",
                        "delete"));
                out.add(new ProducerRecord<>(topic, key, value));
                out.add(new ProducerRecord<>(topic, key, delete));
                out.add(new ProducerRecord<>(topic, key, value));
            }
            case "newer_then_older" -> {
                ObjectNode newer = (ObjectNode) c.get("value").deepCopy();
                newer.put("event_time", "2020-01-01T00:00:00Z").put("text", "A newer text of the document.");
                out.add(new ProducerRecord<>(topic, key, Json.toBytes(newer)));
                out.add(new ProducerRecord<>(topic, key, value));
            }
            default -> out.add(new ProducerRecord<>(topic, key, value));
        }
        return out;
    }
}
