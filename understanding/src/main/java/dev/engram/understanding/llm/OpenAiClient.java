package dev.engram.understanding.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A small client for the OpenAI-compatible chat-completions and embeddings endpoints, over {@code java.net.http}.
 * Every call has a timeout; 429, 5xx, timeouts and connection errors are retried with jittered exponential backoff,
 * honouring {@code Retry-After}; a semaphore bounds the requests in flight.
 */
public final class OpenAiClient {

    /** One chat message. */
    public record Message(String role, String content) {}

    /** A chat completion's text and token usage. */
    public record Completion(String content, long promptTokens, long completionTokens) {}

    /** A function the model may call: its name, what it does, and the JSON Schema of its arguments. */
    public record Tool(String name, String description, JsonNode parameters) {}

    /** A call the model asked for; {@code arguments} is the JSON text it sent, unparsed (it may be malformed). */
    public record ToolCall(String id, String name, String arguments) {}

    /**
     * One turn of a tool-calling conversation: a system, user or assistant message (the assistant's with the calls it
     * made), or a tool's answer to the call {@code toolCallId}.
     */
    public record Turn(String role, String content, List<ToolCall> toolCalls, String toolCallId) {
        public Turn {
            toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        }

        public static Turn system(String content) {
            return new Turn("system", content, List.of(), null);
        }

        public static Turn user(String content) {
            return new Turn("user", content, List.of(), null);
        }

        public static Turn tool(String toolCallId, String content) {
            return new Turn("tool", content, List.of(), toolCallId);
        }
    }

    /** The model's answer in a tool-calling conversation: text (empty when it only calls tools) and calls. */
    public record ToolReply(String content, List<ToolCall> toolCalls, long promptTokens, long completionTokens) {
        /** The assistant turn to append to the conversation. */
        public Turn turn() {
            return new Turn("assistant", content, toolCalls, null);
        }
    }

    /** Observes each HTTP attempt: {@code outcome} is ok, retried or failed. */
    @FunctionalInterface
    public interface CallListener {
        void onCall(String model, String outcome);
    }

    private static final Duration BASE_BACKOFF = Duration.ofMillis(250);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final LlmConfig config;
    private final HttpClient http;
    private final FairPermits permits;
    private final CallListener listener;

    public OpenAiClient(LlmConfig config, CallListener listener) {
        this.config = config;
        this.listener = listener;
        this.permits = new FairPermits(config.concurrency());
        this.http = HttpClient.newBuilder()
                .connectTimeout(config.timeout())
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    public LlmConfig config() {
        return config;
    }

    /**
     * A chat completion. With a {@code schema}, the reply is constrained to it (structured output,
     * {@code response_format: json_schema}); servers without that support still get the schema in the prompt.
     */
    public Completion chat(List<Message> messages, String schemaName, JsonNode schema) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("model", config.model());
        body.put("temperature", 0);
        ArrayNode msgs = body.putArray("messages");
        for (Message m : messages) {
            msgs.addObject().put("role", m.role()).put("content", m.content());
        }
        if (schema != null) {
            ObjectNode format = body.putObject("response_format");
            format.put("type", "json_schema");
            ObjectNode js = format.putObject("json_schema");
            js.put("name", schemaName);
            js.put("strict", true);
            js.set("schema", schema);
        }
        JsonNode reply = post("/chat/completions", body, config.model());
        JsonNode choice = reply.path("choices").path(0);
        JsonNode content = choice.path("message").path("content");
        if (!content.isTextual()) {
            throw new LlmException("chat completion without text content: " + abbreviate(reply.toString()), 200, null);
        }
        JsonNode usage = reply.path("usage");
        return new Completion(
                content.asText(),
                usage.path("prompt_tokens").asLong(0),
                usage.path("completion_tokens").asLong(0));
    }

    /**
     * One step of a tool-calling conversation ({@code tools}, {@code tool_calls} and {@code role: tool} messages of the
     * chat-completions protocol). A call whose name or arguments are missing is returned as it came, for the caller
     * to answer with an error; a reply with neither text nor calls is an {@link LlmException}.
     */
    public ToolReply converse(List<Turn> turns, List<Tool> tools) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("model", config.model());
        body.put("temperature", 0);
        ArrayNode msgs = body.putArray("messages");
        for (Turn t : turns) {
            ObjectNode m = msgs.addObject().put("role", t.role());
            if (t.content() == null) {
                m.putNull("content");
            } else {
                m.put("content", t.content());
            }
            if (!t.toolCalls().isEmpty()) {
                ArrayNode calls = m.putArray("tool_calls");
                for (ToolCall c : t.toolCalls()) {
                    ObjectNode call = calls.addObject().put("id", c.id()).put("type", "function");
                    call.putObject("function").put("name", c.name()).put("arguments", c.arguments());
                }
            }
            if (t.toolCallId() != null) {
                m.put("tool_call_id", t.toolCallId());
            }
        }
        ArrayNode defs = body.putArray("tools");
        for (Tool tool : tools) {
            ObjectNode fn = defs.addObject().put("type", "function").putObject("function");
            fn.put("name", tool.name()).put("description", tool.description());
            fn.set("parameters", tool.parameters());
        }
        body.put("tool_choice", "auto");
        JsonNode reply = post("/chat/completions", body, config.model());
        JsonNode message = reply.path("choices").path(0).path("message");
        if (!message.isObject()) {
            throw new LlmException("chat completion without a message: " + abbreviate(reply.toString()), 200, null);
        }
        List<ToolCall> calls = new ArrayList<>();
        int n = 0;
        for (JsonNode c : message.path("tool_calls")) {
            JsonNode fn = c.path("function");
            JsonNode args = fn.path("arguments");
            calls.add(new ToolCall(
                    c.path("id").isTextual() ? c.path("id").asText() : "call_" + n,
                    fn.path("name").asText(""),
                    args.isTextual() ? args.asText() : args.isMissingNode() ? "" : args.toString()));
            n++;
        }
        JsonNode content = message.path("content");
        String text = content.isTextual() ? content.asText() : "";
        if (calls.isEmpty() && text.isBlank()) {
            throw new LlmException(
                    "chat completion with neither text nor tool calls: " + abbreviate(reply.toString()), 200, null);
        }
        JsonNode usage = reply.path("usage");
        return new ToolReply(
                text,
                calls,
                usage.path("prompt_tokens").asLong(0),
                usage.path("completion_tokens").asLong(0));
    }

    /** Embeddings of {@code inputs}, in input order, from {@code model}. */
    public List<float[]> embeddings(String model, List<String> inputs) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("model", model);
        ArrayNode in = body.putArray("input");
        inputs.forEach(in::add);
        JsonNode reply = post("/embeddings", body, model);
        JsonNode data = reply.path("data");
        if (!data.isArray() || data.size() != inputs.size()) {
            throw new LlmException(
                    "embeddings reply has " + data.size() + " items for " + inputs.size() + " inputs", 200, null);
        }
        float[][] out = new float[inputs.size()][];
        for (JsonNode item : data) {
            int index = item.path("index").asInt(-1);
            JsonNode vector = item.path("embedding");
            if (index < 0 || index >= out.length || !vector.isArray() || vector.isEmpty()) {
                throw new LlmException("malformed embeddings item: " + abbreviate(item.toString()), 200, null);
            }
            float[] v = new float[vector.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) vector.get(i).asDouble();
            }
            out[index] = v;
        }
        return List.of(out);
    }

    private JsonNode post(String path, JsonNode body, String model) {
        byte[] payload = Json.toBytes(body);
        URI uri = URI.create(stripSlash(config.baseUrl().toString()) + path);
        LlmException last = null;
        for (int attempt = 0; attempt <= config.maxRetries(); attempt++) {
            Optional<Duration> retryAfter = Optional.empty();
            try {
                HttpResponse<byte[]> response = send(uri, payload);
                int status = response.statusCode();
                if (status / 100 == 2) {
                    listener.onCall(model, "ok");
                    try {
                        return Json.mapper().readTree(response.body());
                    } catch (IOException e) {
                        throw new LlmException("the API returned invalid JSON: " + e.getMessage(), status, e);
                    }
                }
                String text = abbreviate(new String(response.body(), StandardCharsets.UTF_8));
                last = new LlmException("HTTP " + status + " from " + uri + ": " + text, status, null);
                if (status != 429 && status / 100 != 5) {
                    listener.onCall(model, "failed");
                    throw last;
                }
                retryAfter = response.headers().firstValue("Retry-After").flatMap(OpenAiClient::parseRetryAfter);
            } catch (HttpTimeoutException e) {
                last = new LlmException("timed out after " + config.timeout() + " calling " + uri, -1, e);
            } catch (IOException e) {
                last = new LlmException("cannot reach " + uri + ": " + e, -1, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LlmException("interrupted calling " + uri, -1, e);
            }
            if (attempt == config.maxRetries()) {
                break;
            }
            listener.onCall(model, "retried");
            int done = attempt;
            sleep(retryAfter.orElseGet(() -> backoff(done)));
        }
        listener.onCall(model, "failed");
        throw new LlmException(
                "gave up after " + (config.maxRetries() + 1) + " attempts: " + last.getMessage(), last.status(), last);
    }

    private HttpResponse<byte[]> send(URI uri, byte[] payload) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(config.timeout())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(payload));
        if (!config.apiKey().isEmpty()) {
            request.header("Authorization", "Bearer " + config.apiKey());
        }
        String tenant = permits.acquire();
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } finally {
            permits.release(tenant);
        }
    }

    /** Exponential backoff with full jitter in [0.5, 1.5) of the nominal delay. */
    static Duration backoff(int attempt) {
        long nominal = Math.min(MAX_BACKOFF.toMillis(), BASE_BACKOFF.toMillis() << Math.min(attempt, 16));
        double jitter = 0.5 + ThreadLocalRandom.current().nextDouble();
        return Duration.ofMillis((long) (nominal * jitter));
    }

    /** Retry-After as delta-seconds or an HTTP date, capped at a minute. */
    static Optional<Duration> parseRetryAfter(String value) {
        String v = value.strip();
        Duration d;
        try {
            d = Duration.ofSeconds(Long.parseLong(v));
        } catch (NumberFormatException e) {
            try {
                d = Duration.between(ZonedDateTime.now(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME));
            } catch (DateTimeParseException e2) {
                return Optional.empty();
            }
        }
        if (d.isNegative()) {
            d = Duration.ZERO;
        }
        return Optional.of(d.compareTo(Duration.ofMinutes(1)) > 0 ? Duration.ofMinutes(1) : d);
    }

    private static void sleep(Duration d) {
        try {
            TimeUnit.MILLISECONDS.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LlmException("interrupted while backing off", -1, e);
        }
    }

    private static String stripSlash(String s) {
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }

    static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 297) + "...";
    }

    /** Convenience for callers that build message lists. */
    public static List<Message> messages(String system, String user) {
        List<Message> out = new ArrayList<>();
        out.add(new Message("system", system));
        out.add(new Message("user", user));
        return out;
    }
}
