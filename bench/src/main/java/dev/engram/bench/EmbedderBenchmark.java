package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.cli.Corpus;
import dev.engram.understanding.LocalModel;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.PassageUnderstander;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every local model on exactly the texts the embedded understanding embeds, on one thread: one text per call, the
 * calls the understanding makes (a passage's texts in one call), and the whole corpus's texts in one call (the most
 * batching there can be; an fp32 model batches texts of equal length, an int8 one embeds one text per call whatever
 * it is given, as its vectors would otherwise depend on their batch mates). One text per call is also timed by kind
 * of text (passage, memory, entity, fact, question), the memories included even when, without a Qdrant mirror, the
 * understanding does not embed them.
 *
 * <p>Usage: {@code EmbedderBenchmark [--data DIR] [--limit N] [--threads T] [--rounds R] [--out FILE]}; each
 * measure is the best of its rounds.
 */
public final class EmbedderBenchmark {

    private EmbedderBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts =
                BenchOptions.parse("embedders", args, "--data", "--limit", "--out", "--rounds", "--threads");
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/2wiki-corpus"));
        int limit = Integer.parseInt(opts.getOrDefault("--limit", "300"));
        int threads = Integer.parseInt(opts.getOrDefault("--threads", "1"));
        int rounds = Integer.parseInt(opts.getOrDefault("--rounds", "2"));
        EngramConfig config = EngramConfig.local(System.getenv());
        List<List<String>> perPassage = new ArrayList<>();
        Map<String, List<String>> byKind = new LinkedHashMap<>();
        int textCount = 0;
        // the texts alone (no embedder is asked): what the understanding embeds as configured, and by kind every text
        // it may embed, the memory included, to show what each kind costs
        PassageUnderstander understander = UnderstandBenchmark.embedded(null, config);
        PassageUnderstander everything =
                new PassageUnderstander(understander.extractor(), null, false, PassageUnderstander.SEEN_TEXTS, true);
        for (JsonNode doc : Corpus.read(data.resolve("corpus.jsonl"), limit)) {
            PassageEvent.Upsert p = UnderstandBenchmark.wholeDocument(doc);
            Extraction x = understander.extract(p);
            everything.textsToEmbed(p, x).forEach((kind, texts) -> byKind.computeIfAbsent(
                            kind.name().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .addAll(texts));
            List<String> texts = UnderstandBenchmark.textsToEmbed(understander, p, x);
            perPassage.add(texts);
            textCount += texts.size();
        }
        boolean memoryEmbedded = config.mirrors().qdrant() != null;
        List<String> all = perPassage.stream().flatMap(List::stream).toList();
        int n = perPassage.size();
        System.out.printf(
                "%d passages, %.1f texts per passage (memories %s), %d ONNX threads%n",
                n, (double) textCount / n, memoryEmbedded ? "embedded" : "not embedded: no Qdrant mirror", threads);

        Map<String, Object> models = new LinkedHashMap<>();
        for (LocalModel model : LocalModel.values()) {
            try (OnnxEmbedder embedder = OnnxEmbedder.load(model, 256, threads)) {
                all.stream().limit(500).forEach(embedder::embed); // warm-up
                double alone = Double.MAX_VALUE;
                double perCall = Double.MAX_VALUE;
                double together = Double.MAX_VALUE;
                Map<String, Double> kindSeconds = new LinkedHashMap<>();
                for (int round = 0; round < rounds; round++) {
                    double embedded = 0;
                    for (Map.Entry<String, List<String>> kind : byKind.entrySet()) {
                        long k0 = System.nanoTime();
                        kind.getValue().forEach(embedder::embed);
                        double seconds = (System.nanoTime() - k0) / 1e9;
                        kindSeconds.merge(kind.getKey(), seconds, Math::min);
                        if (memoryEmbedded || !kind.getKey().equals("memory")) {
                            embedded += seconds;
                        }
                    }
                    alone = Math.min(alone, embedded);
                    long t0 = System.nanoTime();
                    perPassage.forEach(embedder::embedAll);
                    perCall = Math.min(perCall, (System.nanoTime() - t0) / 1e9);
                    t0 = System.nanoTime();
                    embedder.embedAll(all);
                    together = Math.min(together, (System.nanoTime() - t0) / 1e9);
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("batches", model.batchInvariant());
                m.put("one_text_per_call_passages_per_s", n / alone);
                m.put("one_passage_per_call_passages_per_s", n / perCall);
                m.put("whole_corpus_per_call_passages_per_s", n / together);
                // where one text per call spends its time, by kind of text (memories even when they are not embedded)
                double kindsTotal = kindSeconds.values().stream()
                        .mapToDouble(Double::doubleValue)
                        .sum();
                Map<String, Object> kinds = new LinkedHashMap<>();
                kindSeconds.forEach((kind, seconds) -> {
                    int count = byKind.get(kind).size();
                    kinds.put(
                            kind,
                            Map.of(
                                    "texts_per_passage", (double) count / n,
                                    "ms_per_text", count == 0 ? 0 : seconds * 1000 / count,
                                    "share_of_time", seconds / kindsTotal));
                    System.out.printf(
                            "    %-9s %5.2f texts per passage, %6.2f ms per text, %4.1f %% of the time%n",
                            kind,
                            (double) count / n,
                            count == 0 ? 0 : seconds * 1000 / count,
                            100 * seconds / kindsTotal);
                });
                m.put("by_kind", kinds);
                models.put(model.id(), m);
                System.out.printf(
                        "%-22s one text per call %6.1f   a passage per call %6.1f   the corpus in one call %6.1f"
                                + " passages/s%n",
                        model.id(), n / alone, n / perCall, n / together);
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("dataset", data.getFileName().toString());
        result.put("passages", n);
        result.put("texts_per_passage", (double) textCount / n);
        result.put("memory_embedded", memoryEmbedded);
        result.put("threads", threads);
        result.put("models", models);
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(result));
        }
    }
}
