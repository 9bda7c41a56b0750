package dev.engram.service.app;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Extraction;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.RuleExtractor;
import dev.engram.understanding.Understander;
import dev.engram.understanding.agent.ConstructionAgent;
import dev.engram.understanding.agent.MemoryView;
import dev.engram.understanding.llm.LlmConfig;
import dev.engram.understanding.llm.LlmExtractor;
import dev.engram.understanding.llm.OpenAiClient;
import dev.engram.understanding.llm.OpenAiEmbedder;
import java.time.Clock;

/**
 * Builds the understanding the configuration asks for: embedded rules, or an LLM over an OpenAI-compatible API; and,
 * with {@code ENGRAM_CONSTRUCTION=agent}, the construction agent over either.
 */
public final class UnderstanderFactory {

    private UnderstanderFactory() {}

    /** The understanding of a tool that runs no service (benchmarks): its own LLM client when it needs one. */
    public static Understander create(EngramConfig config, Meters meters) {
        if (config.understanding().agent() != null) {
            throw new IllegalArgumentException(
                    "invalid configuration: the agent construction (ENGRAM_CONSTRUCTION=agent)"
                            + " reads the namespace's memory, so it runs in the service only");
        }
        LlmConfig llm = config.understanding().llm();
        return create(config, llm == null ? null : new OpenAiClient(llm, meters::llmCall), MemoryView.EMPTY, meters);
    }

    /**
     * @param client the process's one LLM client (null without an LLM); the understanding uses it when its kind is
     *     {@code llm}, and the agent construction when it is on
     * @param memory what the agent construction reads of a namespace's memory
     */
    public static Understander create(EngramConfig config, OpenAiClient client, MemoryView memory, Meters meters) {
        EngramConfig.Understanding u = config.understanding();
        Extractor extractor = u.kind() == EngramConfig.Understanding.Kind.LLM
                ? new LlmExtractor(client, u.questionsPerPassage())
                : new RuleExtractor(new EnglishNlp(), u.questionsPerPassage());
        if (u.agent() != null) {
            EngramConfig.Agent a = u.agent();
            extractor = new ConstructionAgent(
                    client,
                    extractor,
                    memory,
                    new ConstructionAgent.Settings(
                            a.maxRounds(),
                            3,
                            a.tokensPerPassage(),
                            a.tokensPerHour(),
                            a.concurrencyPerNamespace(),
                            a.transientAttempts(),
                            a::constructs),
                    new ConstructionAgent.Listener() {
                        @Override
                        public void passage(String namespace, String outcome, int rounds) {
                            meters.agentPassage(namespace, outcome, rounds);
                        }

                        @Override
                        public void spent(String namespace, String model, Extraction.TokenUsage usage) {
                            meters.llmUsage(namespace, model, usage);
                        }

                        @Override
                        public void toolCall(String tool, String outcome) {
                            meters.agentToolCall(tool, outcome);
                        }
                    },
                    Clock.systemUTC());
        }
        Embedder embedder = u.kind() == EngramConfig.Understanding.Kind.LLM
                        && !u.llm().embeddingModel().isEmpty()
                ? new OpenAiEmbedder(client, u.llm().embeddingModel())
                : localEmbedder(config);
        // the memory vector's one reader is the Qdrant mirror's memory collection
        return new PassageUnderstander(
                extractor, embedder, true, u.embedReuseTexts(), config.mirrors().qdrant() != null);
    }

    private static Embedder localEmbedder(EngramConfig config) {
        return OnnxEmbedder.load(
                config.understanding().embedder(),
                config.understanding().embedMaxTokens(),
                config.understanding().embedThreads());
    }
}
