package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.Hashing;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The understandings of a namespace's base documents, recorded once from the understandings topic, and copy {@code k}
 * of them made without the read and understand steps: the scale benchmark's way to grow a namespace past what the
 * full pipeline ingests in a session (about 20 passages a second on two cores, so 250,000 passages would take hours).
 *
 * <p>A copy is what the full pipeline makes of {@link CorpusCopies#renamed copy k of a document}, as near as it can be
 * without reading it: every uncommon capitalized word of the passage's title, headings, text and of its extraction
 * (memory, names, descriptions, aliases, facts, relations, questions, a conversation's speaker and participants)
 * renamed by {@link CopyNames}, the extraction's spans moved with the renamed words, and every vector the base
 * understanding holds moved a little by seeded noise (as {@link CopyEmbedder} does, cosine about 0.95 to it). Its
 * document, passage ids and content hashes are its own.
 *
 * <p>What it skips: the documents topic and the read step (parsing, chunking, manifests made from the text, content
 * hashing), the understand step (extraction, embedding, the extractions cache), and with them whatever the extractor
 * would have found differently in the renamed text. A replayed manifest has no position on the documents topic
 * ({@code input} null), so a writer waiting for it over the API is not told. Everything after it runs as for any
 * document: the memory step with entity resolution, memory changes and mirror records, snapshots, vector indexes and
 * queries.
 */
final class UnderstandingReplay {

    /** Fields of an extraction whose values are not text of the passage (ids, enums, the extractor's name). */
    private static final Set<String> NOT_TEXT = Set.of("type", "extractor", "model", "mode", "kind", "usage");

    private final Map<String, List<byte[]>> byDocument; // as read from the topic: compact, parsed again for each copy
    private final CopyNames names;

    UnderstandingReplay(Map<String, List<byte[]>> byDocument, CopyNames names) {
        this.byDocument = byDocument;
        this.names = names;
    }

    /**
     * Every understood passage and manifest of {@code namespace} on {@code topic} up to its end now, in order, by
     * document; committed records only.
     */
    static UnderstandingReplay record(String bootstrap, String topic, String namespace, CopyNames names) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 << 20);
        Map<String, List<byte[]>> byDocument = new LinkedHashMap<>();
        try (KafkaConsumer<String, byte[]> consumer =
                new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition()))
                    .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (!namespace.equals(r.key()) || r.value() == null) {
                        continue;
                    }
                    JsonNode event = Json.mapper().readTree(r.value());
                    String kind = event.path("kind").asText();
                    String document = kind.equals("manifest")
                            ? event.path("document_id").asText()
                            : event.path("passage").path("document_id").asText();
                    if (kind.equals("manifest") || kind.equals("understood")) {
                        byDocument
                                .computeIfAbsent(document, d -> new ArrayList<>())
                                .add(r.value());
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("an understanding that is not JSON on " + topic, e);
        }
        return new UnderstandingReplay(byDocument, names);
    }

    /** Documents recorded. */
    int documents() {
        return byDocument.size();
    }

    /** About how much heap the recorded understandings hold: the benchmark's own, set apart from the service's. */
    long heapBytes() {
        long bytes = 0;
        for (List<byte[]> events : byDocument.values()) {
            for (byte[] e : events) {
                bytes += 16 + e.length;
            }
        }
        return bytes;
    }

    /** Copy {@code k} of the recorded understandings of {@code document}, in their recorded order. */
    List<JsonNode> copy(String document, int k) throws IOException {
        List<byte[]> recorded = byDocument.get(document);
        if (recorded == null) {
            throw new IllegalArgumentException("no understandings recorded for document " + document);
        }
        String copyId = document + "~" + k;
        List<JsonNode> out = new ArrayList<>(recorded.size());
        for (byte[] bytes : recorded) {
            ObjectNode event = (ObjectNode) Json.mapper().readTree(bytes);
            out.add(
                    event.path("kind").asText().equals("manifest")
                            ? manifest(event, copyId, k)
                            : understood(event, copyId, k));
        }
        return out;
    }

    private ObjectNode manifest(ObjectNode m, String copyId, int k) {
        String namespace = m.path("namespace").asText();
        m.put("document_id", copyId);
        m.put("title", names.rename(m.path("title").asText(), k));
        m.putNull("input"); // never read from the documents topic
        for (JsonNode ref : m.withArray("passages")) {
            ObjectNode r = (ObjectNode) ref;
            r.put(
                    "passage_id",
                    passageId(namespace, copyId, r.path("passage_id").asText()));
            r.put("content_hash", contentHash(r.path("content_hash").asText(), k));
        }
        return m;
    }

    private ObjectNode understood(ObjectNode event, String copyId, int k) {
        ObjectNode passage = (ObjectNode) event.path("passage");
        String namespace = passage.path("namespace").asText();
        String passageId =
                passageId(namespace, copyId, passage.path("passage_id").asText());
        passage.put("document_id", copyId);
        passage.put("passage_id", passageId);
        passage.put("content_hash", contentHash(passage.path("content_hash").asText(), k));
        passage.put("title", names.rename(passage.path("title").asText(), k));
        ArrayNode headings = JsonNodeFactory.instance.arrayNode();
        passage.path("headings").forEach(h -> headings.add(names.rename(h.asText(), k)));
        passage.set("headings", headings);
        Renamed text = renamed(passage.path("text").asText(), k);
        passage.put("text", text.text());
        if (passage.path("conversation").isObject()) {
            renameAll(passage.path("conversation"), k, null);
        }
        ObjectNode understanding = (ObjectNode) event.path("understanding");
        renameAll(understanding.path("extraction"), k, text);
        ObjectNode embeddings = (ObjectNode) understanding.path("embeddings");
        long seed = ((long) passageId.hashCode() << 32) ^ k;
        for (Iterator<Map.Entry<String, JsonNode>> it = embeddings.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (field.getValue().isArray()) {
                ArrayNode moved = JsonNodeFactory.instance.arrayNode();
                for (JsonNode v : field.getValue()) {
                    moved.add(moved(v.asText(), seed ^ (31L * field.getKey().hashCode() + moved.size())));
                }
                field.setValue(moved);
            } else {
                field.setValue(new TextNode(
                        moved(field.getValue().asText(), seed ^ field.getKey().hashCode())));
            }
        }
        return event;
    }

    /** Every text in {@code node} renamed, in place; spans (objects of {@code start} and {@code end}) moved with it. */
    private void renameAll(JsonNode node, int k, Renamed text) {
        if (node instanceof ObjectNode o) {
            if (text != null
                    && o.size() == 2
                    && o.path("start").isInt()
                    && o.path("end").isInt()) {
                o.put("start", text.moved(o.path("start").asInt()));
                o.put("end", text.moved(o.path("end").asInt()));
                return;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                if (NOT_TEXT.contains(field.getKey())) {
                    continue;
                }
                if (field.getValue().isTextual()) {
                    field.setValue(new TextNode(names.rename(field.getValue().asText(), k)));
                } else {
                    renameAll(field.getValue(), k, text);
                }
            }
        } else if (node instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i).isTextual()) {
                    a.set(i, new TextNode(names.rename(a.get(i).asText(), k)));
                } else {
                    renameAll(a.get(i), k, text);
                }
            }
        }
    }

    /** A passage's text renamed, with where each renamed word was and is, to move offsets into it. */
    record Renamed(String text, int[] from, int[] to) {
        /** Offset {@code x} of the base text in the renamed one; inside a renamed word, its start or end. */
        int moved(int x) {
            int shift = 0;
            for (int i = 0; i < from.length; i += 2) {
                if (x <= from[i]) {
                    break;
                }
                if (x < from[i + 1]) { // inside a renamed word: its new end
                    return to[i + 1];
                }
                shift = to[i + 1] - from[i + 1];
            }
            return x + shift;
        }
    }

    Renamed renamed(String text, int k) {
        Matcher m = CopyNames.CAPITALIZED.matcher(text);
        StringBuilder out = new StringBuilder(text.length() + 16);
        List<Integer> from = new ArrayList<>();
        List<Integer> to = new ArrayList<>();
        int last = 0;
        while (m.find()) {
            String word = names.rename(m.group(), k);
            if (word.equals(m.group())) {
                continue;
            }
            out.append(text, last, m.start());
            from.add(m.start());
            from.add(m.end());
            to.add(out.length());
            out.append(word);
            to.add(out.length());
            last = m.end();
        }
        out.append(text, last, text.length());
        return new Renamed(
                out.toString(),
                from.stream().mapToInt(Integer::intValue).toArray(),
                to.stream().mapToInt(Integer::intValue).toArray());
    }

    private static String passageId(String namespace, String copyId, String basePassageId) {
        return Hashing.id(namespace, copyId, basePassageId);
    }

    private static String contentHash(String baseHash, int k) {
        return Hashing.sha256Hex(baseHash + "~" + k);
    }

    /** A base64 vector moved by seeded noise and normalized again; an empty one (not computed) stays empty. */
    private static String moved(String base64, long seed) {
        if (base64.isEmpty()) {
            return base64;
        }
        float[] v = VectorCodec.fromBytes(Base64.getDecoder().decode(base64));
        CopyEmbedder.perturb(v, new SplittableRandom(seed));
        return Base64.getEncoder().encodeToString(VectorCodec.toBytes(v));
    }
}
