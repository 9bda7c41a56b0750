package dev.engram.service;

import dev.engram.metrics.Meters;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.RuleExtractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.LlmExtractor;
import dev.engram.understanding.llm.OpenAiClient;
import dev.engram.understanding.llm.OpenAiEmbedder;

/** Builds the understanding the configuration asks for: embedded rules, or an LLM over an OpenAI-compatible API. */
public final class UnderstanderFactory {

    private UnderstanderFactory() {}

    public static Understander create(EngramConfig config, Meters meters) {
        if (config.understanding().equals("llm")) {
            OpenAiClient client = new OpenAiClient(config.llm(), meters::llmCall);
            Extractor extractor = new LlmExtractor(client, config.questionsPerPassage());
            Embedder embedder = config.llm().embeddingModel().isEmpty()
                    ? localEmbedder(config)
                    : new OpenAiEmbedder(client, config.llm().embeddingModel());
            return new PassageUnderstander(extractor, embedder, true);
        }
        return new PassageUnderstander(
                new RuleExtractor(new EnglishNlp(), config.questionsPerPassage()), localEmbedder(config), true);
    }

    private static Embedder localEmbedder(EngramConfig config) {
        return OnnxEmbedder.allMiniLmL6V2(config.embedMaxTokens(), config.embedThreads());
    }
}
