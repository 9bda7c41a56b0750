package dev.engram.understanding.agent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.engram.schemas.Json;
import dev.engram.understanding.llm.LlmException;
import dev.engram.understanding.llm.OpenAiClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The agent's tool set (reading, writing, process) with its JSON-Schema contracts, from
 * {@code /prompts/agent-v1.tools.json}. A call is checked against its tool's schema before it runs; a call that is not
 * (an unknown tool, arguments that are not JSON or break the contract) is answered with the reason, as an observation,
 * and counted as malformed.
 */
final class AgentTools {

    /** A tool's answer, and whether the call was malformed (not a failure of the tool itself). */
    record Answer(String tool, ObjectNode observation, boolean malformed) {
        boolean ok() {
            return observation.path("ok").asBoolean(false);
        }
    }

    /** Rounds and tokens of the loop so far, for {@code get_progress}. */
    interface Progress {
        int roundsUsed();

        int roundsLeft();

        long tokensUsed();

        long tokensLeft();
    }

    static final String VERSION = "agent-v1";

    private static final List<OpenAiClient.Tool> TOOLS;
    private static final Map<String, JsonSchema> CONTRACTS = new LinkedHashMap<>();

    static {
        JsonNode defs;
        try (InputStream in = AgentTools.class.getResourceAsStream("/prompts/" + VERSION + ".tools.json")) {
            if (in == null) {
                throw new IllegalStateException("the agent's tool definitions are missing");
            }
            defs = Json.mapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the agent's tool definitions", e);
        }
        List<OpenAiClient.Tool> tools = new ArrayList<>();
        JsonSchemaFactory factory = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
        for (JsonNode d : defs) {
            String name = d.path("name").asText();
            tools.add(new OpenAiClient.Tool(name, d.path("description").asText(), d.path("parameters")));
            CONTRACTS.put(name, factory.getSchema(d.path("parameters")));
        }
        TOOLS = List.copyOf(tools);
    }

    private AgentTools() {}

    static List<OpenAiClient.Tool> definitions() {
        return TOOLS;
    }

    /** Runs one call against the stage. */
    static Answer call(Stage stage, OpenAiClient.ToolCall call, Progress progress) {
        JsonSchema contract = CONTRACTS.get(call.name());
        if (contract == null) {
            return malformed(
                    "unknown",
                    "there is no tool named '" + call.name() + "'; the tools are "
                            + String.join(", ", CONTRACTS.keySet()));
        }
        JsonNode args;
        try {
            args = call.arguments().isBlank()
                    ? Json.mapper().createObjectNode()
                    : Json.mapper().readTree(call.arguments());
        } catch (JsonProcessingException e) {
            return malformed(call.name(), "the arguments are not JSON: " + e.getOriginalMessage());
        }
        if (args == null || !args.isObject()) {
            return malformed(call.name(), "the arguments must be a JSON object");
        }
        List<String> violations = contract.validate(args).stream()
                .map(ValidationMessage::getMessage)
                .sorted()
                .toList();
        if (!violations.isEmpty()) {
            return malformed(call.name(), "the arguments break the tool's contract: " + String.join("; ", violations));
        }
        try {
            return new Answer(call.name(), run(stage, call.name(), args, progress), false);
        } catch (LlmException | MemoryView.Unavailable e) {
            throw e;
        } catch (RuntimeException e) {
            // a tool that fails (memory unreachable, ...) is an observation: the agent may try again or go on
            return new Answer(call.name(), Stage.error("the tool failed: " + e.getMessage()), false);
        }
    }

    private static ObjectNode run(Stage stage, String tool, JsonNode a, Progress progress) {
        return switch (tool) {
            case "read_paragraph" -> stage.readParagraph();
            case "browse_context" -> stage.browseContext();
            case "search_kg" ->
                stage.searchKg(
                        text(a, "query"),
                        a.path("by").asText("name"),
                        a.path("limit").asInt(5));
            case "explore_fusion" ->
                stage.exploreFusion(text(a, "query"), a.path("limit").asInt(5));
            case "create_entity" -> createEntity(stage, a);
            case "create_entities" -> {
                ObjectNode o = Stage.ok();
                a.path("entities").forEach(e -> o.withArray("results").add(createEntity(stage, e)));
                yield o;
            }
            case "update_entity" ->
                stage.updateEntity(
                        text(a, "entity"), optional(a, "description"), optional(a, "type"), list(a, "add_aliases"));
            case "merge_entities" ->
                stage.mergeEntities(text(a, "keep"), text(a, "merge"), text(a, "evidence"), optional(a, "reason"));
            case "delete_entity" -> stage.deleteEntity(text(a, "entity"), text(a, "reason"));
            case "create_relation" -> createRelation(stage, a);
            case "create_relations" -> {
                ObjectNode o = Stage.ok();
                a.path("relations").forEach(r -> o.withArray("results").add(createRelation(stage, r)));
                yield o;
            }
            case "update_relation" ->
                stage.updateRelation(
                        text(a, "relation"),
                        optional(a, "relation_type"),
                        optional(a, "evidence"),
                        a.path("confidence").isNumber() ? a.path("confidence").asDouble() : null);
            case "delete_relation" -> stage.deleteRelation(text(a, "relation"), text(a, "reason"));
            case "mark_for_review" -> stage.markForReview(text(a, "subject"), text(a, "reason"));
            case "create_todo" -> stage.createTodo(text(a, "text"));
            case "complete_todo" -> stage.completeTodo(text(a, "id"));
            case "get_progress" ->
                stage.progress(
                        progress.roundsUsed(), progress.roundsLeft(), progress.tokensUsed(), progress.tokensLeft());
            default -> Stage.error("there is no tool named '" + tool + "'");
        };
    }

    private static ObjectNode createEntity(Stage stage, JsonNode e) {
        return stage.createEntity(text(e, "name"), optional(e, "type"), optional(e, "description"), list(e, "aliases"));
    }

    private static ObjectNode createRelation(Stage stage, JsonNode r) {
        return stage.createRelation(
                text(r, "head"),
                text(r, "relation"),
                text(r, "tail"),
                text(r, "evidence"),
                r.path("confidence").isNumber() ? r.path("confidence").asDouble() : 0.8);
    }

    private static Answer malformed(String tool, String reason) {
        return new Answer(tool, Stage.error(reason), true);
    }

    private static String text(JsonNode o, String field) {
        return o.path(field).asText("");
    }

    private static String optional(JsonNode o, String field) {
        return o.path(field).isTextual() ? o.path(field).asText() : null;
    }

    private static List<String> list(JsonNode o, String field) {
        List<String> out = new ArrayList<>();
        o.path(field).forEach(v -> out.add(v.asText()));
        return out;
    }
}
