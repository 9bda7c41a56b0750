package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.RuleExtractor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Precision and recall of the embedded extractor against hand labels ({@code bench/data/extraction-labels.jsonl}).
 *
 * <p>Entities match by normalized name (case, diacritics and punctuation ignored), either side's aliases included.
 * Class nouns ("English mathematician", type concept) are not named entities and are left out of entity precision.
 * Facts match when their two ends match labelled entities that a labelled fact relates, in either order (the
 * relation wording is not compared: "directed" and "directed by" state the same link).
 *
 * <p>Usage: {@code ExtractionEval [--labels FILE] [--out FILE] [--verbose true]}.
 */
public final class ExtractionEval {

    private ExtractionEval() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse("extraction", args, "--labels", "--out", "--verbose");
        Path labels = Path.of(opts.getOrDefault("--labels", "bench/data/extraction-labels.jsonl"));
        RuleExtractor extractor = new RuleExtractor(new EnglishNlp(), 3);
        boolean verbose = opts.containsKey("--verbose");
        int goldEntities = 0;
        int predictedEntities = 0;
        int entityHitsGold = 0;
        int entityHitsPredicted = 0;
        int goldFacts = 0;
        int predictedFacts = 0;
        int factHitsGold = 0;
        int factHitsPredicted = 0;
        int typed = 0;
        int typedRight = 0;
        long nanos = 0;
        int passages = 0;
        for (String line : Files.readAllLines(labels, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            passages++;
            JsonNode gold = Json.mapper().readTree(line);
            String text = gold.path("text").asText();
            long t0 = System.nanoTime();
            Extraction x = extractor.extract(new PassageEvent.Upsert(
                    "eval",
                    "d",
                    1,
                    "0",
                    0,
                    "h",
                    gold.path("title").asText(),
                    List.of(),
                    text,
                    0,
                    text.length(),
                    null,
                    null));
            nanos += System.nanoTime() - t0;

            // gold entity id by every normalized surface form
            Map<String, Integer> goldIds = new HashMap<>();
            Map<Integer, String> goldTypes = new HashMap<>();
            int id = 0;
            for (JsonNode e : gold.path("entities")) {
                goldIds.put(norm(e.path("name").asText()), id);
                e.path("aliases")
                        .forEach(a -> goldIds.putIfAbsent(
                                norm(a.asText()),
                                goldIds.get(norm(e.path("name").asText()))));
                goldTypes.put(id, e.path("type").asText());
                id++;
            }
            goldEntities += id;
            Map<String, Integer> predictedToGold = new HashMap<>();
            Set<Integer> found = new HashSet<>();
            for (Extraction.Entity e : x.entities()) {
                Integer g = goldIds.get(norm(e.name()));
                for (String a : e.aliases()) {
                    if (g == null) {
                        g = goldIds.get(norm(a));
                    }
                }
                if (g != null) {
                    predictedToGold.put(e.name(), g);
                    for (String a : e.aliases()) {
                        predictedToGold.put(a, g);
                    }
                }
                if (e.type() == EntityType.CONCEPT) {
                    continue;
                }
                predictedEntities++;
                if (g != null) {
                    entityHitsPredicted++;
                    found.add(g);
                    typed++;
                    if (goldTypes.get(g).equals(e.type().wireName())) {
                        typedRight++;
                    }
                }
            }
            entityHitsGold += found.size();

            Set<String> goldPairs = new HashSet<>();
            for (JsonNode f : gold.path("facts")) {
                Integer h = goldIds.get(norm(f.path("head").asText()));
                Integer t = goldIds.get(norm(f.path("tail").asText()));
                if (h != null && t != null) {
                    goldPairs.add(pair(h, t));
                }
            }
            goldFacts += gold.path("facts").size();
            Set<String> matchedPairs = new HashSet<>();
            for (Extraction.Fact f : x.facts()) {
                boolean conceptTail = x.entities().stream()
                        .anyMatch(e -> e.name().equals(f.tail()) && e.type() == EntityType.CONCEPT);
                if (conceptTail) {
                    continue; // "X is a Y" class facts have no counterpart among named-entity labels
                }
                predictedFacts++;
                Integer h = predictedToGold.get(f.head());
                Integer t = predictedToGold.get(f.tail());
                if (h != null && t != null && goldPairs.contains(pair(h, t))) {
                    factHitsPredicted++;
                    matchedPairs.add(pair(h, t));
                }
            }
            for (JsonNode f : gold.path("facts")) {
                Integer h = goldIds.get(norm(f.path("head").asText()));
                Integer t = goldIds.get(norm(f.path("tail").asText()));
                if (h != null && t != null && matchedPairs.contains(pair(h, t))) {
                    factHitsGold++;
                } else if (verbose) {
                    System.out.printf(
                            "  missed fact  %s | %s | %s%n",
                            f.path("head").asText(),
                            f.path("relation").asText(),
                            f.path("tail").asText());
                }
            }
            if (verbose) {
                for (Extraction.Fact f : x.facts()) {
                    Integer h = predictedToGold.get(f.head());
                    Integer t = predictedToGold.get(f.tail());
                    if (h == null || t == null || !goldPairs.contains(pair(h, t))) {
                        System.out.printf("  extra fact   %s | %s | %s%n", f.head(), f.relation(), f.tail());
                    }
                }
                for (Extraction.Entity e : x.entities()) {
                    if (!predictedToGold.containsKey(e.name()) && e.type() != EntityType.CONCEPT) {
                        System.out.printf(
                                "  extra entity %s (%s)%n", e.name(), e.type().wireName());
                    }
                }
                System.out.println("--- " + gold.path("title").asText());
            }
        }
        double entityPrecision = pct(entityHitsPredicted, predictedEntities);
        double entityRecall = pct(entityHitsGold, goldEntities);
        double typeAccuracy = pct(typedRight, typed);
        double factPrecision = pct(factHitsPredicted, predictedFacts);
        double factRecall = pct(factHitsGold, goldFacts);
        double msPerPassage = nanos / 1e6 / Math.max(1, passages);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("labels", labels.toString());
        result.put("extractor", extractor.id());
        result.put("passages", passages);
        result.put("entity_precision", entityPrecision);
        result.put("entity_recall", entityRecall);
        result.put("entity_type_accuracy", typeAccuracy);
        result.put("fact_precision", factPrecision);
        result.put("fact_recall", factRecall);
        result.put("ms_per_passage", msPerPassage);
        System.out.printf("extractor %s on %d passages (%s)%n", extractor.id(), passages, labels);
        System.out.printf(
                "entities: precision %.1f%%  recall %.1f%%  (type accuracy on matches %.1f%%)%n",
                entityPrecision, entityRecall, typeAccuracy);
        System.out.printf("facts:    precision %.1f%%  recall %.1f%%%n", factPrecision, factRecall);
        System.out.printf("extraction time: %.2f ms per passage%n", msPerPassage);
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(result));
        }
    }

    private static String pair(int a, int b) {
        return Math.min(a, b) + ":" + Math.max(a, b);
    }

    private static double pct(int num, int den) {
        return den == 0 ? 0 : 100.0 * num / den;
    }

    static String norm(String s) {
        return Normalizer.normalize(s, Normalizer.Form.NFKD)
                .replaceAll("\\p{M}+", "")
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}]+", " ")
                .strip()
                .replaceFirst("^the ", "");
    }
}
