package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.Hashing;
import dev.engram.understanding.Understander;
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
 * without reading it: every uncommon capitalized word of the passage's title, headings and text and of its extraction
 * (memory, names, descriptions, aliases, facts, relations, questions) renamed by {@link CopyNames}, the extraction's
 * spans and the passage's offsets in its document moved with the renamed words, and the vectors made as
 * {@link CopyEmbedder} makes them for the texts the understanding embeds (a text without a renamed word keeps its
 * vector; a renamed one gets its base text's vector moved by noise seeded by the renamed text, cosine about 0.95). A
 * conversation's speaker, participants and session stay as they are, as a copy's document metadata does. Its
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

    /**
     * Copy {@code k} of the recorded understandings of {@code document}, in their recorded order; {@code text} is the
     * base document's text, which passages' offsets point into.
     */
    List<JsonNode> copy(String document, String text, int k) throws IOException {
        List<byte[]> recorded = byDocument.get(document);
        if (recorded == null) {
            throw new IllegalArgumentException("no understandings recorded for document " + document);
        }
        String copyId = document + "~" + k;
        Renamed documentText = renamed(text, k);
        List<JsonNode> out = new ArrayList<>(recorded.size());
        for (byte[] bytes : recorded) {
            ObjectNode event = (ObjectNode) Json.mapper().readTree(bytes);
            out.add(
                    event.path("kind").asText().equals("manifest")
                            ? manifest(event, copyId, k)
                            : understood(event, copyId, k, documentText));
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

    private ObjectNode understood(ObjectNode event, String copyId, int k, Renamed documentText) throws IOException {
        ObjectNode passage = (ObjectNode) event.path("passage");
        ObjectNode understanding = (ObjectNode) event.path("understanding");
        PassageEvent.Upsert basePassage = Json.mapper().treeToValue(passage, PassageEvent.Upsert.class);
        Extraction base = Json.mapper().treeToValue(understanding.path("extraction"), Extraction.class);
        String namespace = passage.path("namespace").asText();
        passage.put("document_id", copyId);
        passage.put(
                "passage_id",
                passageId(namespace, copyId, passage.path("passage_id").asText()));
        passage.put("content_hash", contentHash(passage.path("content_hash").asText(), k));
        passage.put("title", names.rename(passage.path("title").asText(), k));
        ArrayNode headings = JsonNodeFactory.instance.arrayNode();
        passage.path("headings").forEach(h -> headings.add(names.rename(h.asText(), k)));
        passage.set("headings", headings);
        Renamed text = renamed(passage.path("text").asText(), k);
        passage.put("text", text.text());
        passage.put("start", documentText.moved(passage.path("start").asInt()));
        passage.put("end", documentText.moved(passage.path("end").asInt()));
        // a conversation's speaker, participants and session stay as they are, as a copy's document metadata does
        renameAll(understanding.path("extraction"), k, text);
        PassageEvent.Upsert copyPassage = Json.mapper().treeToValue(passage, PassageEvent.Upsert.class);
        Extraction copy = Json.mapper().treeToValue(understanding.path("extraction"), Extraction.class);
        embed((ObjectNode) understanding.path("embeddings"), basePassage, base, copyPassage, copy);
        return event;
    }

    /**
     * The copy's vectors, as {@link CopyEmbedder} makes them for the texts the understanding embeds: a text the copy
     * did not rename keeps its vector; a renamed one gets the base text's vector moved by noise seeded by the renamed
     * text. A utility question's vector (the normalized mean of the question's and the passage's) is taken apart into
     * the two, each made so, and put together again.
     */
    private static void embed(
            ObjectNode vectors,
            PassageEvent.Upsert basePassage,
            Extraction base,
            PassageEvent.Upsert copyPassage,
            Extraction copy) {
        float[] passageBefore = vector(vectors.path("passage"));
        float[] passage =
                near(passageBefore, Understander.embeddingText(basePassage), Understander.embeddingText(copyPassage));
        vectors.put("passage", encode(passage));
        if (!vectors.path("memory").asText().isEmpty()) {
            boolean own =
                    !copy.memory().equals(copyPassage.text()) && !copy.memory().isBlank();
            vectors.put(
                    "memory",
                    encode(own ? near(vector(vectors.path("memory")), base.memory(), copy.memory()) : passage));
        }
        moveEach(
                vectors.withArray("entities"),
                base.entities().stream().map(Extraction.Entity::embeddingText).toList(),
                copy.entities().stream().map(Extraction.Entity::embeddingText).toList());
        moveEach(
                vectors.withArray("facts"),
                base.facts().stream().map(Extraction.Fact::text).toList(),
                copy.facts().stream().map(Extraction.Fact::text).toList());
        ArrayNode questions = vectors.withArray("questions");
        for (int i = 0; i < questions.size(); i++) {
            float[] mean = vector(questions.get(i));
            // mean = (q + p) / |q + p| with q and p of unit length: q = 2 (mean · p) mean - p
            double dot = 0;
            for (int d = 0; d < mean.length; d++) {
                dot += (double) mean[d] * passageBefore[d];
            }
            float[] question = new float[mean.length];
            for (int d = 0; d < mean.length; d++) {
                question[d] = (float) (2 * dot * mean[d] - passageBefore[d]);
            }
            question = near(
                    normalized(question),
                    base.questions().get(i),
                    copy.questions().get(i));
            for (int d = 0; d < mean.length; d++) {
                question[d] += passage[d];
            }
            questions.set(i, encode(normalized(question)));
        }
    }

    /** Each vector of {@code vectors}, embedded from {@code baseTexts}, made for {@code copyTexts} ({@link #near}). */
    private static void moveEach(ArrayNode vectors, List<String> baseTexts, List<String> copyTexts) {
        for (int i = 0; i < vectors.size(); i++) {
            vectors.set(i, encode(near(vector(vectors.get(i)), baseTexts.get(i), copyTexts.get(i))));
        }
    }

    /** {@code v} if the copy's text is the base's, else moved by noise seeded by the copy's text. */
    private static float[] near(float[] v, String baseText, String copyText) {
        if (copyText.equals(baseText)) {
            return v;
        }
        float[] moved = v.clone();
        CopyEmbedder.perturb(moved, new SplittableRandom(copyText.hashCode()));
        return moved;
    }

    private static float[] normalized(float[] v) {
        double norm = 0;
        for (float x : v) {
            norm += (double) x * x;
        }
        float inv = (float) (1 / Math.sqrt(norm));
        for (int i = 0; i < v.length; i++) {
            v[i] *= inv;
        }
        return v;
    }

    private static float[] vector(JsonNode base64) {
        return VectorCodec.fromBytes(Base64.getDecoder().decode(base64.asText()));
    }

    private static TextNode encode(float[] v) {
        return new TextNode(Base64.getEncoder().encodeToString(VectorCodec.toBytes(v)));
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
        /** Offset {@code x} of the base text in the renamed one; inside a renamed word, that word's new end. */
        int moved(int x) {
            int shift = 0;
            for (int i = 0; i < from.length; i += 2) {
                if (x <= from[i]) {
                    break;
                }
                if (x < from[i + 1]) { // inside a renamed word (never for a span of whole words): its new end
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
}
