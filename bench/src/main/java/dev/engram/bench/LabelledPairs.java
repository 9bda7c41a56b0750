package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Span;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Hand-labelled mention pairs found in a memory built by the resolution bench: each labelled mention is located among
 * the entities extracted from its passage (by normalized name, else by an evidence span that covers it), and a pair
 * counts as merged when both mentions belong to the same resolved entity.
 */
final class LabelledPairs {

    /** A labelled pair the merge score decides: the features of its two surfaces' stored decision. */
    record Example(
            String id, String dataset, Map<String, Double> features, boolean same, String rule, String decision) {}

    record Mention(String surfaceId, String surfaceName, String normalized, String type, String canonical) {}

    private final KeyValueStore<String, StoredPassage> passages;
    private final KeyValueStore<String, EntityRecord> entities;
    private final KeyValueStore<String, PairDecision> pairs;
    private final Map<String, List<StoredPassage>> byDocument = new TreeMap<>();

    LabelledPairs(TopologyTestDriver driver) {
        passages = driver.getKeyValueStore(StateStores.MEMORY_PASSAGES.name());
        entities = driver.getKeyValueStore(StateStores.MEMORY_ENTITIES.name());
        pairs = driver.getKeyValueStore(StateStores.MEMORY_ENTITY_PAIRS.name());
        try (KeyValueIterator<String, StoredPassage> it = passages.all()) {
            it.forEachRemaining(kv -> byDocument
                    .computeIfAbsent(Keys.of(kv.value.namespace(), kv.value.documentId()), k -> new ArrayList<>())
                    .add(kv.value));
        }
    }

    Mention find(String ns, JsonNode side) {
        String mention = side.path("mention").asText();
        String normalized = EntityNames.normalize(mention);
        List<StoredPassage> docPassages = byDocument.getOrDefault(
                Keys.of(ns, Integer.toString(side.path("doc_id").asInt())), List.of());
        Extraction.Entity best = null;
        StoredPassage in = null;
        for (StoredPassage p : docPassages) {
            in = p;
            for (Extraction.Entity e : p.extraction().entities()) {
                if (EntityNames.normalize(e.name()).equals(normalized)) {
                    best = e;
                    break;
                }
            }
            if (best != null) {
                break;
            }
            // Else an entity whose evidence covers the mention in the text and whose name contains it, or
            // which has it as an alias ("Eric Marlon Bishop (born …), known professionally as Jamie Foxx").
            int at = p.text().indexOf(mention);
            for (Extraction.Entity e : p.extraction().entities()) {
                boolean named = EntityNames.normalize(e.name()).contains(normalized)
                        || e.aliases().stream()
                                .anyMatch(a -> EntityNames.normalize(a).equals(normalized));
                for (Span s : e.spans()) {
                    if (at >= 0 && s.start() <= at && s.end() >= at + mention.length() && named) {
                        best = e;
                    }
                }
            }
            if (best != null) {
                break;
            }
        }
        if (best == null) {
            return null;
        }
        String sid = in.surfaceIdsByMention().get(in.extraction().entities().indexOf(best));
        EntityRecord record = entities.get(Keys.of(ns, sid));
        if (record == null) {
            return null;
        }
        return new Mention(
                sid, record.name(), record.normalized(), record.type().wireName(), record.canonical());
    }

    String pairDecision(String ns, Mention a, Mention b) {
        if (a == null || b == null) {
            return "-";
        }
        PairDecision d = pairs.get(Keys.of(ns, a.surfaceId(), b.surfaceId()));
        return d == null ? "no candidate pair" : d.decision().wireName() + "/" + d.rule() + " " + d.evidence();
    }

    /**
     * The labelled pairs whose surfaces have a decision that the merge score reads (features stored), once per
     * pair of surfaces and label.
     */
    List<Example> examples(List<JsonNode> labelled) {
        Map<String, Example> out = new TreeMap<>();
        for (JsonNode pair : labelled) {
            String ns = pair.path("dataset").asText();
            Mention a = find(ns, pair.path("a"));
            Mention b = find(ns, pair.path("b"));
            if (a == null || b == null || a.surfaceId().equals(b.surfaceId())) {
                continue;
            }
            PairDecision d = pairs.get(Keys.of(ns, a.surfaceId(), b.surfaceId()));
            if (d == null || d.features().isEmpty()) {
                continue;
            }
            boolean same = pair.path("same").asBoolean();
            String key = ns + " "
                    + (a.surfaceId().compareTo(b.surfaceId()) < 0
                            ? a.surfaceId() + " " + b.surfaceId()
                            : b.surfaceId() + " " + a.surfaceId())
                    + " " + same;
            out.putIfAbsent(
                    key,
                    new Example(
                            pair.path("id").asText(),
                            ns,
                            d.features(),
                            same,
                            d.rule(),
                            d.decision().wireName()));
        }
        return new ArrayList<>(out.values());
    }

    Map<String, Integer> decisionCounts() {
        Map<String, Integer> counts = new TreeMap<>();
        try (KeyValueIterator<String, PairDecision> it = pairs.all()) {
            it.forEachRemaining(kv -> {
                if (kv.value.entityId().compareTo(kv.value.otherId()) < 0) {
                    counts.merge(kv.value.decision().wireName() + "/" + kv.value.rule(), 1, Integer::sum);
                }
            });
        }
        return counts;
    }

    /** Merge precision and recall over the labelled pairs, with the exact-name baseline and counts by kind. */
    Map<String, Object> score(List<JsonNode> pairs, boolean verbose) {
        int positives = 0;
        int found = 0;
        int merged = 0;
        int correct = 0;
        int baselineMerged = 0;
        int baselineCorrect = 0;
        Map<String, int[]> byKind = new TreeMap<>(); // kind → [pairs, merged]
        for (JsonNode pair : pairs) {
            String ns = pair.path("dataset").asText();
            boolean same = pair.path("same").asBoolean();
            String kind = pair.path("kind").asText();
            Mention a = find(ns, pair.path("a"));
            Mention b = find(ns, pair.path("b"));
            boolean isMerged = a != null && b != null && a.canonical().equals(b.canonical());
            boolean baseline = a != null && b != null && a.normalized().equals(b.normalized());
            positives += same ? 1 : 0;
            found += a != null && b != null ? 1 : 0;
            merged += isMerged ? 1 : 0;
            correct += isMerged && same ? 1 : 0;
            baselineMerged += baseline ? 1 : 0;
            baselineCorrect += baseline && same ? 1 : 0;
            int[] k = byKind.computeIfAbsent((same ? "+" : "-") + kind, x -> new int[2]);
            k[0]++;
            k[1] += isMerged ? 1 : 0;
            if (verbose && (isMerged || same)) {
                System.out.printf(
                        Locale.ROOT,
                        "%s %-28s %s | %s | %s%n",
                        pair.path("id").asText(),
                        (isMerged != same ? same ? "missed " : "WRONG " : "merged ") + kind,
                        describe(pair.path("a"), a),
                        describe(pair.path("b"), b),
                        pairDecision(ns, a, b));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("pairs", pairs.size());
        out.put("positives", positives);
        out.put("both_mentions_found", found);
        out.put("merged", merged);
        out.put("merge_precision", percent(correct, merged));
        out.put("merge_recall", percent(correct, positives));
        out.put("wrong_merges", merged - correct);
        out.put(
                "baseline_exact_name",
                Map.of(
                        "merged",
                        baselineMerged,
                        "merge_precision",
                        percent(baselineCorrect, baselineMerged),
                        "merge_recall",
                        percent(baselineCorrect, positives),
                        "wrong_merges",
                        baselineMerged - baselineCorrect));
        Map<String, Object> kinds = new LinkedHashMap<>();
        byKind.forEach((k, v) -> kinds.put(k, Map.of("pairs", v[0], "merged", v[1])));
        out.put("by_kind", kinds);
        return out;
    }

    private static String describe(JsonNode gold, Mention m) {
        return "\"" + gold.path("mention").asText() + "\"@"
                + gold.path("doc_id").asInt() + "→"
                + (m == null ? "not found" : m.surfaceName() + " (" + m.type() + ")");
    }

    static double percent(int part, int whole) {
        return whole == 0 ? 0 : Math.round(1000.0 * part / whole) / 10.0;
    }
}
