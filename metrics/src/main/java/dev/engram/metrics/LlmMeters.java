package dev.engram.metrics;

import dev.engram.schemas.Extraction;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/** The meters of LLM use: tokens and their cost, calls, and the passages, rounds and tool calls of the agent. */
final class LlmMeters extends AreaMeters {

    private enum TokenKind implements Meters.TagValue {
        PROMPT,
        COMPLETION
    }

    LlmMeters(MeterRegistry registry) {
        super(registry);
    }

    void llmUsage(String namespace, String model, Extraction.TokenUsage usage) {
        for (TokenKind kind : TokenKind.values()) {
            long n = kind == TokenKind.PROMPT ? usage.prompt() : usage.completion();
            Counter.builder(Meters.LLM_TOKENS)
                    .description("LLM tokens spent on extraction and the agent construction")
                    .tag("namespace", namespace)
                    .tag("model", model)
                    .tag("kind", kind.tag())
                    .register(registry)
                    .increment(n);
        }
        Counter.builder(Meters.LLM_COST)
                .description(
                        "Estimated LLM cost of extraction and the agent construction in US dollars, at the configured prices")
                .tag("namespace", namespace)
                .tag("model", model)
                .register(registry)
                .increment(usage.costUsd());
    }

    void agentPassage(String namespace, String outcome, int rounds) {
        Counter.builder(Meters.AGENT_PASSAGES)
                .description("Passages the construction agent worked on, by outcome")
                .tag("namespace", namespace)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
        DistributionSummary.builder(Meters.AGENT_ROUNDS)
                .description("Tool-calling rounds per passage of the construction agent")
                .tag("namespace", namespace)
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32)
                .register(registry)
                .record(rounds);
    }

    void agentToolCall(String tool, String outcome) {
        Counter.builder(Meters.AGENT_TOOL_CALLS)
                .description("Tool calls of the construction agent, by tool and outcome")
                .tag("tool", tool)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    void llmCall(String model, String outcome) {
        Counter.builder(Meters.LLM_CALLS)
                .description("LLM calls by outcome")
                .tag("model", model)
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }
}
