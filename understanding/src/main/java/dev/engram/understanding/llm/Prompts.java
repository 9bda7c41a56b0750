package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A versioned prompt: its instructions and the JSON Schema of the reply, from {@code /prompts/<name>.txt} and
 * {@code /prompts/<name>.schema.json}. The version is part of the extraction cache key, so a changed prompt never
 * reuses replies to the old one.
 */
public record Prompts(String version, String instructions, JsonNode responseSchema, JsonSchema validator) {

    public static final Prompts EXTRACT = load("extract-v1");
    public static final Prompts DECOMPOSE = load("decompose-v1");
    public static final Prompts ANSWER = load("answer-v1");
    public static final Prompts SUMMARIZE = load("summarize-v1");
    public static final Prompts PROBE = load("probe-v1");
    public static final Prompts CUE = load("cue-v1");
    public static final Prompts FUSE = load("fuse-v1");
    public static final Prompts TRY_ANSWER = load("try-answer-v1");

    static Prompts load(String version) {
        String text = read("/prompts/" + version + ".txt");
        try {
            JsonNode schema = Json.mapper().readTree(read("/prompts/" + version + ".schema.json"));
            JsonSchema validator = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                    .getSchema(schema);
            return new Prompts(version, text, schema, validator);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the reply schema of prompt " + version, e);
        }
    }

    /** The instructions with {@code {name}} placeholders filled in. */
    public String render(String name, Object value) {
        return instructions.replace("{" + name + "}", String.valueOf(value));
    }

    /** A reply that conforms to the prompt's schema, with the tokens it took. */
    public record Reply(JsonNode json, long promptTokens, long completionTokens) {}

    /**
     * Asks the LLM with these instructions (the prompt's own, or rendered from them) and the user text; the reply
     * must be JSON for the prompt's schema, else an {@link LlmException} says why.
     */
    public Reply ask(OpenAiClient client, String renderedInstructions, String user, String name) {
        OpenAiClient.Completion reply =
                client.chat(OpenAiClient.messages(renderedInstructions, user), name, responseSchema);
        JsonNode json;
        try {
            json = JsonReplies.parse(reply.content());
        } catch (JsonProcessingException e) {
            throw new LlmException(version + " reply is not valid JSON: " + e.getOriginalMessage(), 200, e);
        }
        List<String> violations = violations(json);
        if (!violations.isEmpty()) {
            throw new LlmException(
                    version + " reply does not match its schema: " + String.join("; ", violations), 200, null);
        }
        return new Reply(json, reply.promptTokens(), reply.completionTokens());
    }

    /** Schema violations of a reply, empty when it conforms. */
    public List<String> violations(JsonNode reply) {
        return validator.validate(reply).stream()
                .map(ValidationMessage::getMessage)
                .sorted()
                .toList();
    }

    private static String read(String resource) {
        try (InputStream in = Prompts.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("prompt resource " + resource + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
