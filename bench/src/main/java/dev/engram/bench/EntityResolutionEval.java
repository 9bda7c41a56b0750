package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.processors.MergeModel;
import dev.engram.schemas.Json;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.UnderstanderFactory;
import dev.engram.service.cli.Corpus;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StateStores;
import dev.engram.topology.EngramTopology;
import dev.engram.topology.Topics;
import dev.engram.understanding.Understander;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Merge precision and recall of entity resolution against hand-labelled mention pairs ({@code
 * bench/data/er-pairs.jsonl}, passages in {@code bench/data/er-passages.jsonl}).
 *
 * <p>The passages go through the real topologies in one namespace per dataset: read and the configured understanding
 * once, then the memory step (construct, with its RocksDB stores) twice over the same understandings, the first round
 * warming the JIT up, the second timed ({@code memory_step_us_per_mention}: its wall time over the entity mentions
 * extracted) and scored. Each labelled mention is then located among the entities extracted from its
 * passage (by normalized name, else by an evidence span that covers it); the pair counts as merged when both
 * mentions belong to the same resolved entity. A mention the extractor did not find counts as not merged. The
 * baseline is what memory did without resolution: one entity per exact normalized name.
 *
 * <p>Usage: {@code EntityResolutionEval [--pairs FILE] [--passages FILE] [--conversations DIR] [--corpora DIR] [--out FILE] [--verbose
 * true] [--seed N]}; with {@code --corpora} every passage of each dataset's {@code corpus.jsonl} is ingested too, so that
 * resolution meets the ambiguity of a whole corpus.
 */
public final class EntityResolutionEval {

    private static final Topics TOPICS = new Topics("eval.");

    private EntityResolutionEval() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse(
                "resolution",
                args,
                "--conversations",
                "--corpora",
                "--fit",
                "--l2",
                "--model",
                "--out",
                "--pairs",
                "--passages",
                "--seed",
                "--verbose");
        Path pairsFile = Path.of(opts.getOrDefault("--pairs", "bench/data/er-pairs.jsonl"));
        Path passagesFile = Path.of(opts.getOrDefault("--passages", "bench/data/er-passages.jsonl"));
        boolean verbose = opts.containsKey("--verbose");
        List<JsonNode> pairs = readJsonLines(pairsFile);

        // dataset → doc id → passage (title, text)
        Map<String, Map<Integer, JsonNode>> docs = new TreeMap<>();
        for (JsonNode p : readJsonLines(passagesFile)) {
            docs.computeIfAbsent(p.path("dataset").asText(), k -> new TreeMap<>())
                    .put(p.path("doc_id").asInt(), p);
        }
        // Passages not redistributed (a conversation's turns) name their line in the set's corpus: read them there.
        Path local = Path.of(opts.getOrDefault("--conversations", "../shared/data"));
        Map<String, String> skipped = new TreeMap<>();
        for (String dataset : List.copyOf(docs.keySet())) {
            Map<Integer, JsonNode> of = docs.get(dataset);
            if (of.values().stream().allMatch(p -> p.path("text").isTextual())) {
                continue;
            }
            Path corpus = local.resolve(dataset).resolve("corpus.jsonl");
            if (!Files.isRegularFile(corpus)) {
                skipped.put(dataset, "its passages are read from " + corpus + ", which is not there");
                docs.remove(dataset);
                continue;
            }
            List<JsonNode> lines = Corpus.read(corpus, Integer.MAX_VALUE);
            for (Map.Entry<Integer, JsonNode> e : of.entrySet()) {
                if (e.getValue().path("text").isTextual()) {
                    continue;
                }
                JsonNode line = e.getKey() < lines.size() ? lines.get(e.getKey()) : null;
                if (line == null
                        || !line.path("doc_id")
                                .asText()
                                .equals(e.getValue().path("source_id").asText())) {
                    throw new IllegalStateException(dataset + " line " + e.getKey() + " of " + corpus + " is not "
                            + e.getValue().path("source_id").asText() + ": another version of the set");
                }
                e.setValue(line);
            }
        }
        if (!skipped.isEmpty()) {
            pairs = pairs.stream()
                    .filter(p -> !skipped.containsKey(p.path("dataset").asText()))
                    .toList();
            skipped.forEach((dataset, why) -> System.err.println("skipping " + dataset + ": " + why));
        }
        if (opts.containsKey("--corpora")) {
            for (String dataset : List.copyOf(docs.keySet())) {
                Path corpus = Path.of(opts.get("--corpora"), dataset, "corpus.jsonl");
                if (!Files.isRegularFile(corpus)) {
                    continue; // a source without a corpus of its own (kafka-docs)
                }
                List<JsonNode> lines = Corpus.read(corpus, Integer.MAX_VALUE);
                for (int i = 0; i < lines.size(); i++) {
                    JsonNode d = lines.get(i);
                    // a corpus that names its passages by strings is numbered by line, as its labelled passages are
                    int id = d.path("doc_id").canConvertToInt()
                            ? d.path("doc_id").asInt()
                            : i;
                    docs.get(dataset).putIfAbsent(id, d);
                }
            }
        }

        MergeModel model = model(opts.getOrDefault("--model", "shipped"));
        EngramConfig config = EngramConfig.local(System.getenv());
        Understander understander = UnderstanderFactory.create(config, Meters.detached());
        long t0 = System.nanoTime();
        int passages = 0;
        // Read and understand once; the memory step then runs over the same understandings, timed on its own.
        List<TestRecord<byte[], byte[]>> understandings;
        try (TopologyTestDriver ingest = new TopologyTestDriver(
                topology(config, understander, EngramTopology.Part.INGEST), properties("ingest"))) {
            TestInputTopic<byte[], byte[]> input = ingest.createInputTopic(
                    TOPICS.documents().name(), new ByteArraySerializer(), new ByteArraySerializer());
            for (Map.Entry<String, Map<Integer, JsonNode>> ds : docs.entrySet()) {
                for (Map.Entry<Integer, JsonNode> d : ds.getValue().entrySet()) {
                    Map<String, Object> doc = new LinkedHashMap<>();
                    doc.put("namespace", ds.getKey());
                    doc.put("id", Integer.toString(d.getKey()));
                    doc.put("op", "upsert");
                    doc.put("title", d.getValue().path("title").asText());
                    doc.put("text", d.getValue().path("text").asText());
                    // a conversation's turn keeps who said it and when, as a chat app would send it
                    if (d.getValue().path("metadata").isObject()) {
                        doc.put("metadata", d.getValue().path("metadata"));
                    }
                    if (d.getValue().path("event_time").isTextual()) {
                        doc.put("event_time", d.getValue().path("event_time").asText());
                    }
                    input.pipeInput(Integer.toString(d.getKey()).getBytes(StandardCharsets.UTF_8), Json.toBytes(doc));
                    passages++;
                }
            }
            understandings = ingest.createOutputTopic(
                            TOPICS.understandings().name(), new ByteArrayDeserializer(), new ByteArrayDeserializer())
                    .readRecordsToList();
        }
        long mentions = 0;
        for (TestRecord<byte[], byte[]> r : understandings) {
            for (JsonNode e : Json.mapper()
                    .readTree(r.value())
                    .path("understanding")
                    .path("extraction")
                    .path("entities")) {
                mentions += Math.max(1, e.path("spans").size());
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        // the first round warms the JIT up; the second is timed and scored
        double memorySeconds = 0;
        Fingerprint ordered = null;
        List<LabelledPairs.Example> examples = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            try (TopologyTestDriver memory = new TopologyTestDriver(
                    memoryTopology(config, understander, model), properties("memory-" + round))) {
                TestInputTopic<byte[], byte[]> input = memory.createInputTopic(
                        TOPICS.understandings().name(), new ByteArraySerializer(), new ByteArraySerializer());
                long m0 = System.nanoTime();
                for (TestRecord<byte[], byte[]> r : understandings) {
                    input.pipeInput(r);
                }
                memorySeconds = (System.nanoTime() - m0) / 1e9;
                if (round == 1) {
                    LabelledPairs lookup = new LabelledPairs(memory);
                    result = lookup.score(pairs, verbose);
                    Map<String, Object> byDataset = new LinkedHashMap<>();
                    for (String dataset : docs.keySet()) {
                        List<JsonNode> of = pairs.stream()
                                .filter(p -> p.path("dataset").asText().equals(dataset))
                                .toList();
                        Map<String, Object> s = lookup.score(of, false);
                        s.remove("by_kind");
                        byDataset.put(dataset, s);
                    }
                    result.put("by_dataset", byDataset);
                    if (!skipped.isEmpty()) {
                        result.put("skipped", skipped);
                    }
                    result.put("decisions", lookup.decisionCounts());
                    ordered = Fingerprint.of(memory);
                    examples = lookup.examples(pairs);
                }
            }
        }
        result.put("model", model.id());
        if (opts.containsKey("--fit")) {
            double l2 = Double.parseDouble(opts.getOrDefault("--l2", "1"));
            result.put(
                    "fit", fit(config, understander, understandings, pairs, examples, l2, Path.of(opts.get("--fit"))));
        }
        result.put(
                "order_independence",
                shuffledRound(
                        config,
                        understander,
                        model,
                        understandings,
                        ordered,
                        Long.parseLong(opts.getOrDefault("--seed", "20261128"))));
        result.put("passages", passages);
        result.put("mentions", mentions);
        result.put("memory_step_seconds", Math.round(memorySeconds * 1000) / 1000.0);
        result.put("memory_step_us_per_mention", Math.round(memorySeconds * 1e6 / Math.max(1, mentions)));
        result.put("extractor", understander.extractor().id());
        result.put("seconds", Math.round((System.nanoTime() - t0) / 1e8) / 10.0);
        System.out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result));
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(result));
        }
    }

    /**
     * The memory step once more over the same understandings, whole documents in a shuffled order (a fixed seed):
     * entity groups and pair decisions must come out the same, since they are to be a function of the documents.
     */
    private static Map<String, Object> shuffledRound(
            EngramConfig config,
            Understander understander,
            MergeModel model,
            List<TestRecord<byte[], byte[]>> understandings,
            Fingerprint ordered,
            long seed)
            throws IOException {
        Map<String, List<TestRecord<byte[], byte[]>>> byDocument = new LinkedHashMap<>();
        for (TestRecord<byte[], byte[]> r : understandings) {
            UnderstandingEvent e = Json.mapper().readValue(r.value(), UnderstandingEvent.class);
            byDocument
                    .computeIfAbsent(Keys.of(e.namespace(), e.documentId()), k -> new ArrayList<>())
                    .add(r);
        }
        List<List<TestRecord<byte[], byte[]>>> documents = new ArrayList<>(byDocument.values());
        Collections.shuffle(documents, new Random(seed));
        Fingerprint shuffled;
        try (TopologyTestDriver memory =
                new TopologyTestDriver(memoryTopology(config, understander, model), properties("memory-shuffled"))) {
            TestInputTopic<byte[], byte[]> input = memory.createInputTopic(
                    TOPICS.understandings().name(), new ByteArraySerializer(), new ByteArraySerializer());
            documents.forEach(d -> d.forEach(input::pipeInput));
            shuffled = Fingerprint.of(memory);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("documents", documents.size());
        out.put("seed", seed);
        out.put("groups", ordered.groups().size());
        out.put("groups_differing", Fingerprint.differing(ordered.groups(), shuffled.groups()));
        out.put("decisions", ordered.decisions().size());
        out.put("decisions_differing", Fingerprint.differing(ordered.decisions(), shuffled.decisions()));
        out.put("same", ordered.equals(shuffled));
        return out;
    }

    /** The resolved groups (sets of surface ids) and the pair decisions (kind and rule by pair) of a memory. */
    private record Fingerprint(Set<String> groups, Set<String> decisions) {

        static Fingerprint of(TopologyTestDriver driver) {
            KeyValueStore<String, EntityRecord> entities = driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
            Map<String, TreeSet<String>> members = new TreeMap<>();
            try (KeyValueIterator<String, EntityRecord> it = entities.all()) {
                it.forEachRemaining(kv -> members.computeIfAbsent(
                                kv.value.namespace() + " " + kv.value.canonical(), k -> new TreeSet<>())
                        .add(kv.value.id()));
            }
            Set<String> groups = new TreeSet<>();
            members.values().forEach(m -> groups.add(String.join(",", m)));
            KeyValueStore<String, PairDecision> pairs = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PAIRS.name());
            Set<String> decisions = new TreeSet<>();
            try (KeyValueIterator<String, PairDecision> it = pairs.all()) {
                it.forEachRemaining(
                        kv -> decisions.add(kv.key + " " + kv.value.decision().wireName() + " " + kv.value.rule()));
            }
            return new Fingerprint(groups, decisions);
        }

        /** How many entries are in one set and not the other. */
        static int differing(Set<String> a, Set<String> b) {
            Set<String> only = new TreeSet<>(a);
            only.removeAll(b);
            Set<String> other = new TreeSet<>(b);
            other.removeAll(a);
            return only.size() + other.size();
        }
    }

    private static Topology topology(EngramConfig config, Understander understander, EngramTopology.Part part) {
        return EngramTopology.build(settings(config).withPart(part), understander, Meters.detached());
    }

    private static Topology memoryTopology(EngramConfig config, Understander understander, MergeModel model) {
        return EngramTopology.build(
                settings(config).withPart(EngramTopology.Part.MEMORY).withMergeModel(model),
                understander,
                Meters.detached());
    }

    private static EngramTopology.Settings settings(EngramConfig config) {
        return EngramTopology.Settings.of(
                TOPICS, config.ingest().maxDocumentBytes(), config.ingest().chunkMaxTokens());
    }

    /** {@code rules}, {@code shipped} or the path of a model's JSON. */
    private static MergeModel model(String which) throws IOException {
        return switch (which) {
            case "rules" -> MergeModel.RULES;
            case "shipped" -> MergeModel.shipped();
            default -> {
                try (InputStream in = Files.newInputStream(Path.of(which))) {
                    yield MergeModel.read(in);
                }
            }
        };
    }

    /**
     * Fits the merge score to every example and writes it to {@code out}, after measuring it leave-one-source-out:
     * for each source, a model fit on the examples of the others runs the memory step, and that source's labelled
     * pairs are scored (groups, as the bench scores the shipped model).
     */
    private static Map<String, Object> fit(
            EngramConfig config,
            Understander understander,
            List<TestRecord<byte[], byte[]>> understandings,
            List<JsonNode> pairs,
            List<LabelledPairs.Example> examples,
            double l2,
            Path out)
            throws IOException {
        Set<String> sources = new TreeSet<>();
        examples.forEach(e -> sources.add(e.dataset()));
        Map<String, Object> held = new LinkedHashMap<>();
        List<Map<String, Object>> scoredExamples = new ArrayList<>();
        for (String source : sources) {
            List<LabelledPairs.Example> train =
                    examples.stream().filter(e -> !e.dataset().equals(source)).toList();
            MergeModel m = fitOn("merge-score/without-" + source, train, l2);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("examples", examples.size() - train.size());
            List<LabelledPairs.Example> test =
                    examples.stream().filter(e -> e.dataset().equals(source)).toList();
            int scoredMerge = 0;
            int scoredRight = 0;
            for (LabelledPairs.Example e : test) {
                double p = m.probability(e.features());
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("id", e.id());
                row.put("dataset", e.dataset());
                row.put("same", e.same());
                row.put("rule", e.rule());
                row.put("decision", e.decision());
                row.put("held_out_probability", Math.round(p * 1000) / 1000.0);
                row.put("features", e.features());
                scoredExamples.add(row);
                row.put("merges", m.merges(e.features()));
                if (m.merges(e.features())) {
                    scoredMerge++;
                    scoredRight += e.same() ? 1 : 0;
                }
            }
            s.put("examples_scored_merge", scoredMerge);
            s.put("examples_scored_merge_right", scoredRight);
            List<JsonNode> of = pairs.stream()
                    .filter(p -> p.path("dataset").asText().equals(source))
                    .toList();
            try (TopologyTestDriver memory = new TopologyTestDriver(
                    memoryTopology(config, understander, m), properties("memory-without-" + source))) {
                TestInputTopic<byte[], byte[]> input = memory.createInputTopic(
                        TOPICS.understandings().name(), new ByteArraySerializer(), new ByteArraySerializer());
                understandings.forEach(input::pipeInput);
                Map<String, Object> scored = new LabelledPairs(memory).score(of, false);
                scored.remove("by_kind");
                scored.remove("baseline_exact_name");
                s.putAll(scored);
            }
            held.put(source, s);
        }
        MergeModel all = fitOn("merge-score/1", examples, l2);
        Map<String, Object> how = new LinkedHashMap<>();
        how.put("pairs", "bench/data/er-pairs.jsonl");
        how.put("examples", examples.size());
        how.put("same", examples.stream().filter(LabelledPairs.Example::same).count());
        Map<String, Long> bySource = new TreeMap<>();
        examples.forEach(e -> bySource.merge(e.dataset(), 1L, Long::sum));
        how.put("examples_by_source", bySource);
        how.put("l2", l2);
        how.put("leave_one_source_out", held);
        how.put("command", "./engram bench resolution --model rules --fit <file> --l2 " + l2);
        MergeModel written = all.withFit(how);
        Files.write(out, Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(written));
        Map<String, Object> result = new LinkedHashMap<>(how);
        result.put("intercept", written.intercept());
        result.put("weights", written.weights());
        result.put("held_out_examples", scoredExamples);
        return result;
    }

    private static MergeModel fitOn(String id, List<LabelledPairs.Example> examples, double l2) {
        return MergeModel.fit(
                id,
                examples.stream().map(LabelledPairs.Example::features).toList(),
                examples.stream().map(LabelledPairs.Example::same).toList(),
                l2);
    }

    private static Properties properties(String name) throws IOException {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "engram-er-eval-" + name);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(
                StreamsConfig.STATE_DIR_CONFIG,
                Files.createTempDirectory("engram-er-eval").toString());
        return props;
    }

    private static List<JsonNode> readJsonLines(Path file) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                out.add(Json.mapper().readTree(line));
            }
        }
        return out;
    }
}
