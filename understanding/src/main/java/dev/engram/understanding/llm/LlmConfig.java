package dev.engram.understanding.llm;

import java.net.URI;
import java.time.Duration;

/**
 * How to reach an OpenAI-compatible API (OpenAI, vLLM, Ollama, ...).
 *
 * @param baseUrl the API root, e.g. {@code https://api.openai.com/v1} or {@code http://localhost:11434/v1}
 * @param model the chat model used for extraction
 * @param apiKey bearer token; empty for servers without authentication
 * @param timeout per-request timeout
 * @param maxRetries retries after the first attempt for 429, 5xx, timeouts and connection errors
 * @param concurrency most requests in flight at once, across all stream threads
 * @param promptPricePerMillion US dollars per million prompt tokens, for cost accounting
 * @param completionPricePerMillion US dollars per million completion tokens
 * @param embeddingModel embeddings model of the same API, or empty to embed locally with the ONNX model
 */
public record LlmConfig(
        URI baseUrl,
        String model,
        String apiKey,
        Duration timeout,
        int maxRetries,
        int concurrency,
        double promptPricePerMillion,
        double completionPricePerMillion,
        String embeddingModel) {

    public LlmConfig {
        if (baseUrl == null
                || baseUrl.getScheme() == null
                || !baseUrl.getScheme().startsWith("http")) {
            throw new IllegalArgumentException("invalid configuration: ENGRAM_LLM_BASE_URL must be an http(s) URL");
        }
        if (model == null || model.isBlank()) {
            throw new IllegalArgumentException("invalid configuration: ENGRAM_LLM_MODEL must be set");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("invalid configuration: ENGRAM_LLM_TIMEOUT_MS must be positive");
        }
        if (maxRetries < 0 || maxRetries > 20) {
            throw new IllegalArgumentException("invalid configuration: ENGRAM_LLM_MAX_RETRIES must be 0-20");
        }
        if (concurrency < 1 || concurrency > 256) {
            throw new IllegalArgumentException("invalid configuration: ENGRAM_LLM_CONCURRENCY must be 1-256");
        }
        if (promptPricePerMillion < 0 || completionPricePerMillion < 0) {
            throw new IllegalArgumentException("invalid configuration: LLM prices must not be negative");
        }
        apiKey = apiKey == null ? "" : apiKey;
        embeddingModel = embeddingModel == null ? "" : embeddingModel;
    }

    /** Estimated cost of a call in US dollars. */
    public double cost(long promptTokens, long completionTokens) {
        return (promptTokens * promptPricePerMillion + completionTokens * completionPricePerMillion) / 1_000_000.0;
    }

    @Override
    public String toString() {
        return "LlmConfig[baseUrl=" + baseUrl + ", model=" + model + ", apiKey=" + (apiKey.isEmpty() ? "" : "***")
                + ", timeout=" + timeout + ", maxRetries=" + maxRetries + ", concurrency=" + concurrency + "]";
    }
}
