package dev.engram.service;

import dev.engram.metrics.Meters;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.RuleExtractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.llm.LlmConfig;
import dev.engram.understanding.llm.LlmExtractor;
import dev.engram.understanding.llm.OpenAiClient;
import dev.engram.understanding.llm.OpenAiEmbedder;

/** Builds the understanding the configuration asks for: embedded rules, or an LLM over an OpenAI-compatible API. */
public final class UnderstanderFactory {

    private UnderstanderFactory() {}

    /** The understanding of a tool that runs no service (benchmarks): its own LLM client when it needs one. */
    public static Understander create(EngramConfig config, Meters meters) {
        LlmConfig llm = config.understanding().llm();
        return create(config, llm == null ? null : new OpenAiClient(llm, meters::llmCall));
    }

    /**
     * @param client the process's one LLM client (null without an LLM); the understanding uses it when its kind is
     *     {@code llm}
     */
    public static Understander create(EngramConfig config, OpenAiClient client) {
        if (config.understanding().kind() == EngramConfig.Understanding.Kind.LLM) {
            Extractor extractor =
                    new LlmExtractor(client, config.understanding().questionsPerPassage());
            Embedder embedder = config.understanding().llm().embeddingModel().isEmpty()
                    ? localEmbedder(config)
                    : new OpenAiEmbedder(client, config.understanding().llm().embeddingModel());
            return new PassageUnderstander(
                    extractor, embedder, true, config.understanding().embedReuseTexts());
        }
        return new PassageUnderstander(
                new RuleExtractor(new EnglishNlp(), config.understanding().questionsPerPassage()),
                localEmbedder(config),
                true,
                config.understanding().embedReuseTexts());
    }

    private static Embedder localEmbedder(EngramConfig config) {
        return OnnxEmbedder.load(
                config.understanding().embedder(),
                config.understanding().embedMaxTokens(),
                config.understanding().embedThreads());
    }
}
