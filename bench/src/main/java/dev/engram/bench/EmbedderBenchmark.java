package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.service.Corpus;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.LocalModel;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.RuleExtractor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every local model on exactly the texts the embedded understanding embeds, on one thread: one text per call, the
 * calls the understanding makes (a passage's texts in one call), and the whole corpus's texts in one call (the most
 * batching there can be; an fp32 model batches texts of equal length, an int8 one embeds one text per call whatever
 * it is given, as its vectors would otherwise depend on their batch mates).
 *
 * <p>Usage: {@code EmbedderBenchmark [--data DIR] [--limit N] [--threads T] [--rounds R] [--out FILE]}; each
 * measure is the best of its rounds.
 */
public final class EmbedderBenchmark {

    private EmbedderBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = IngestBenchmark.options(args);
        Path data = Path.of(opts.getOrDefault("--data", "../shared/data/2wiki-corpus"));
        int limit = Integer.parseInt(opts.getOrDefault("--limit", "300"));
        int threads = Integer.parseInt(opts.getOrDefault("--threads", "1"));
        int rounds = Integer.parseInt(opts.getOrDefault("--rounds", "2"));
        RuleExtractor extractor = new RuleExtractor(new EnglishNlp(), 3);
        List<List<String>> perPassage = new ArrayList<>();
        int textCount = 0;
        for (JsonNode doc : Corpus.read(data.resolve("corpus.jsonl"), limit)) {
            PassageEvent.Upsert p = UnderstandBenchmark.wholeDocument(doc);
            List<String> texts = UnderstandBenchmark.textsToEmbed(p, extractor.extract(p));
            perPassage.add(texts);
            textCount += texts.size();
        }
        List<String> all = perPassage.stream().flatMap(List::stream).toList();
        int n = perPassage.size();
        System.out.printf("%d passages, %.1f texts per passage, %d ONNX threads%n", n, (double) textCount / n, threads);

        Map<String, Object> models = new LinkedHashMap<>();
        for (LocalModel model : LocalModel.values()) {
            try (OnnxEmbedder embedder = OnnxEmbedder.load(model, 256, threads)) {
                all.stream().limit(500).forEach(embedder::embed); // warm-up
                double alone = Double.MAX_VALUE;
                double perCall = Double.MAX_VALUE;
                double together = Double.MAX_VALUE;
                for (int round = 0; round < rounds; round++) {
                    long t0 = System.nanoTime();
                    all.forEach(embedder::embed);
                    alone = Math.min(alone, (System.nanoTime() - t0) / 1e9);
                    t0 = System.nanoTime();
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
        result.put("threads", threads);
        result.put("models", models);
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(result));
        }
    }
}
