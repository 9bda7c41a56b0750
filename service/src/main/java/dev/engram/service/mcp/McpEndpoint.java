package dev.engram.service.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.engram.schemas.Json;
import dev.engram.schemas.Utf8;
import dev.engram.service.cluster.MemoryAccess;
import dev.engram.service.http.ApiException;
import dev.engram.service.http.HttpApi;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpStatelessServerFeatures;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Model Context Protocol at {@code POST /mcp}, for LLM applications to plug Engram in as their memory: the official
 * MCP Java SDK's server over its stateless streamable-HTTP transport (answered as JSON, no session id, so that any
 * instance behind a load balancer answers any call; {@code GET} is 405 as the transport allows). Each tool is one call
 * of a route through {@link MemoryAccess}, in process, with the caller's key: it keeps the API's validation, limits,
 * key checks (a read key cannot {@code remember}) and routing to the namespace's owner.
 */
public final class McpEndpoint {

    /** The request attribute the HTTP server puts the checked caller under. */
    public static final String CALLER = "engram.caller";

    private static final String NS = "/v1/namespaces/{ns}";
    private static final String DOCUMENT = NS + "/documents/{id}";
    /** The longest {@code remember} and {@code forget} wait for memory to take the change. */
    private static final String WAIT_MS = "120000";

    private static final Logger LOG = LoggerFactory.getLogger(McpEndpoint.class);

    private McpEndpoint() {}

    /**
     * The transport, a servlet, with the server that answers it, behind a guard: what is not one JSON-RPC 2.0 message
     * (strict UTF-8, no member twice, nothing after it, no batch) is refused before the SDK reads it, and an error the
     * transport answers is sent as a JSON-RPC error, never as the exception it was.
     */
    public static HttpServlet servlet(MemoryAccess memory) {
        return new McpGuard(transport(memory));
    }

    private static HttpServletStatelessServerTransport transport(MemoryAccess memory) {
        // the SDK's messages with the SDK's own field names: Engram's mapper writes snake_case
        McpJsonMapper mapper = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        HttpServletStatelessServerTransport transport = HttpServletStatelessServerTransport.builder()
                .jsonMapper(mapper)
                .messageEndpoint("/mcp")
                .maxRequestSize(maxBodyBytes(memory))
                // no caller (the servlet reached other than through the HTTP server's checks): no call is made
                .contextExtractor(request -> request.getAttribute(CALLER) instanceof MemoryAccess.Caller c
                        ? McpTransportContext.create(Map.of(CALLER, c))
                        : McpTransportContext.EMPTY)
                .build();
        McpServer.sync(transport)
                .jsonMapper(mapper)
                .jsonSchemaValidator(new SchemaValidator())
                .validateToolInputs(true)
                // tools run on the request's own (virtual) thread, not on a bounded pool that long waits would fill
                .immediateExecution(true)
                .serverInfo("engram", version())
                .instructions("Engram is a long-term memory. 'remember' a document (it is read into passages, entities"
                        + " and facts), 'retrieve' the passages that answer a question, 'forget' a document exactly;"
                        + " every call names a namespace.")
                .capabilities(McpSchema.ServerCapabilities.builder()
                        .tools(false)
                        .resources(false, false)
                        .build())
                .tools(tools(memory))
                .resourceTemplates(templates(memory))
                .build();
        return transport;
    }

    private static String version() {
        String v = McpEndpoint.class.getPackage().getImplementationVersion();
        return v == null ? "development" : v;
    }

    private static List<McpStatelessServerFeatures.SyncToolSpecification> tools(MemoryAccess memory) {
        Map<String, Object> query = properties("namespace", "query", "mode");
        query.put(
                "top_k",
                Map.of(
                        "type",
                        "integer",
                        "minimum",
                        1,
                        "maximum",
                        100,
                        "description",
                        "how many passages (default 5)"));
        return List.of(
                tool(
                        "remember",
                        "Remember a document (create or replace it by id) and wait until it is in memory.",
                        properties("namespace", "id", "text", "title", "source"),
                        List.of("namespace", "id", "text"),
                        (caller, args) -> {
                            ObjectNode body = Json.mapper().createObjectNode();
                            for (String f : List.of("text", "title", "source")) {
                                if (args.hasNonNull(f)) {
                                    body.set(f, args.get(f));
                                }
                            }
                            return memory.call(
                                    caller,
                                    "PUT",
                                    DOCUMENT,
                                    Map.of("ns", text(args, "namespace"), "id", text(args, "id")),
                                    Map.of("wait", List.of("verified"), "timeout_ms", List.of(WAIT_MS)),
                                    Json.toBytes(body));
                        }),
                tool(
                        "forget",
                        "Forget a document: its passages, facts and the entities only it supported leave memory.",
                        properties("namespace", "id"),
                        List.of("namespace", "id"),
                        (caller, args) -> memory.call(
                                caller,
                                "DELETE",
                                DOCUMENT,
                                Map.of("ns", text(args, "namespace"), "id", text(args, "id")),
                                Map.of("wait", List.of("archived"), "timeout_ms", List.of(WAIT_MS)),
                                new byte[0])),
                tool(
                        "retrieve",
                        "The passages of memory that best answer a query, with their documents.",
                        query,
                        List.of("namespace", "query"),
                        (caller, args) -> ask(memory, caller, args, "/retrieve")),
                tool(
                        "answer",
                        "Answer a question from memory with the configured LLM, citing passages.",
                        query,
                        List.of("namespace", "query"),
                        (caller, args) -> ask(memory, caller, args, "/answer")),
                tool(
                        "entity",
                        "An entity by name (or by id): its aliases, facts, passages and how it was resolved.",
                        properties("namespace", "name", "id"),
                        List.of("namespace"),
                        (caller, args) -> args.hasNonNull("id")
                                ? memory.call(
                                        caller,
                                        "GET",
                                        NS + "/entities/{id}",
                                        Map.of("ns", text(args, "namespace"), "id", text(args, "id")),
                                        Map.of(),
                                        new byte[0])
                                : memory.call(
                                        caller,
                                        "GET",
                                        NS + "/entities",
                                        Map.of("ns", text(args, "namespace")),
                                        Map.of("name", List.of(text(args, "name"))),
                                        new byte[0])),
                tool(
                        "document_status",
                        "A document's status (PENDING, READING, VERIFIED, ARCHIVED), version and passages.",
                        properties("namespace", "id"),
                        List.of("namespace", "id"),
                        (caller, args) -> memory.call(
                                caller,
                                "GET",
                                DOCUMENT,
                                Map.of("ns", text(args, "namespace"), "id", text(args, "id")),
                                Map.of(),
                                new byte[0])));
    }

    private static MemoryAccess.Answer ask(MemoryAccess memory, MemoryAccess.Caller caller, JsonNode args, String to) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("query", text(args, "query"));
        for (String f : List.of("mode", "top_k")) {
            if (args.hasNonNull(f)) {
                body.set(f, args.get(f));
            }
        }
        return memory.call(
                caller, "POST", NS + to, Map.of("ns", text(args, "namespace")), Map.of(), Json.toBytes(body));
    }

    /** What a tool does with its arguments: one call of the API. */
    @FunctionalInterface
    private interface Call {
        MemoryAccess.Answer apply(MemoryAccess.Caller caller, JsonNode args);
    }

    /**
     * A tool whose result is the API's answer: its JSON as text and as structured content; an answer that is not a
     * success, or a call the API refuses, is the tool's error with the API's reason, not a protocol error.
     */
    private static McpStatelessServerFeatures.SyncToolSpecification tool(
            String name, String description, Map<String, Object> properties, List<String> required, Call call) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", properties);
        schema.put("required", required);
        schema.put("additionalProperties", false);
        McpSchema.Tool tool = McpSchema.Tool.builder()
                .name(name)
                .description(description)
                .inputSchema(schema)
                .build();
        return new McpStatelessServerFeatures.SyncToolSpecification(tool, (context, request) -> {
            MemoryAccess.Answer answer;
            try {
                answer = call.apply(caller(context), Json.mapper().valueToTree(request.arguments()));
            } catch (RuntimeException e) {
                ApiException error = ApiException.of(e);
                if (error.status() == 500) {
                    LOG.warn("MCP tool {} failed", name, e);
                }
                answer = MemoryAccess.json(error.status(), HttpApi.errorBody(error.code(), error.getMessage()));
            }
            McpSchema.CallToolResult.Builder result = McpSchema.CallToolResult.builder()
                    .addTextContent(answer.text())
                    .isError(!answer.ok());
            if (answer.ok() && answer.json().isObject()) {
                result.structuredContent(Json.mapper().convertValue(answer.json(), Map.class));
            }
            return result.build();
        });
    }

    private static MemoryAccess.Caller caller(McpTransportContext context) {
        if (context.get(CALLER) instanceof MemoryAccess.Caller c) {
            return c;
        }
        throw new ApiException(401, "unauthorized", "this MCP request did not pass the server's checks");
    }

    /** The body limit of the {@code /mcp} route. */
    private static int maxBodyBytes(MemoryAccess memory) {
        return memory.table().stream()
                .filter(r -> r.template().equals("/mcp"))
                .mapToInt(HttpApi.Route::maxBodyBytes)
                .findFirst()
                .orElse(HttpApi.MAX_BODY_BYTES);
    }

    private static Map<String, Object> properties(String... names) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String n : names) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("type", "string");
            switch (n) {
                case "namespace" -> {
                    p.put("pattern", "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$");
                    p.put("description", "the memory's namespace");
                }
                case "id" -> p.put("description", "the document (or entity) id");
                case "mode" ->
                    p.put(
                            "description",
                            "retrieval mode: hybrid (default), dense, bm25, cogito, como, gem, fusion, pabd");
                default -> p.put("description", n);
            }
            out.put(n, p);
        }
        return out;
    }

    /** A string argument the API needs: a 400 of the tool when it is missing or empty. */
    private static String text(JsonNode args, String name) {
        JsonNode v = args.get(name);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw ApiException.badRequest("argument '" + name + "' must be a non-empty string");
        }
        return v.asText();
    }

    /** A namespace, and a document of one, read as the API's JSON. */
    private static List<McpStatelessServerFeatures.SyncResourceTemplateSpecification> templates(MemoryAccess memory) {
        return List.of(
                new McpStatelessServerFeatures.SyncResourceTemplateSpecification(
                        McpSchema.ResourceTemplate.builder()
                                .uriTemplate("engram://namespaces/{namespace}")
                                .name("namespace")
                                .description("a namespace's documents by status, passages and entities")
                                .mimeType("application/json")
                                .build(),
                        (context, request) -> read(memory, context, request.uri())),
                new McpStatelessServerFeatures.SyncResourceTemplateSpecification(
                        McpSchema.ResourceTemplate.builder()
                                .uriTemplate("engram://namespaces/{namespace}/documents/{id}")
                                .name("document")
                                .description("a document's status, version and passages")
                                .mimeType("application/json")
                                .build(),
                        (context, request) -> read(memory, context, request.uri())));
    }

    private static McpSchema.ReadResourceResult read(MemoryAccess memory, McpTransportContext context, String uri) {
        String prefix = "engram://namespaces/";
        if (!uri.startsWith(prefix) || uri.length() == prefix.length()) {
            throw error(-32602, "unknown resource: " + uri);
        }
        String[] parts = uri.substring(prefix.length()).split("/", 3);
        MemoryAccess.Answer answer;
        try {
            // the template's values as a client fills them in: percent-encoded ("a%2Fb" is the id "a/b"); an id with
            // a slash may also come as it is, after "documents/"
            if (parts.length == 1) {
                answer = memory.call(
                        caller(context), "GET", NS, Map.of("ns", templateValue(parts[0], uri)), Map.of(), new byte[0]);
            } else if (parts.length == 3 && parts[1].equals("documents") && !parts[2].isEmpty()) {
                answer = memory.call(
                        caller(context),
                        "GET",
                        DOCUMENT,
                        Map.of("ns", templateValue(parts[0], uri), "id", templateValue(parts[2], uri)),
                        Map.of(),
                        new byte[0]);
            } else {
                throw error(-32602, "unknown resource: " + uri);
            }
        } catch (McpError e) {
            throw e;
        } catch (RuntimeException e) {
            ApiException api = ApiException.of(e);
            if (api.status() == 500) {
                LOG.warn("reading MCP resource {} failed", uri, e);
            }
            throw error(-32002, "resource " + uri + ": HTTP " + api.status() + ": " + api.getMessage());
        }
        if (!answer.ok()) {
            throw error(-32002, "resource " + uri + ": " + answer.error());
        }
        return new McpSchema.ReadResourceResult(
                List.of(new McpSchema.TextResourceContents(uri, "application/json", answer.text())));
    }

    /** The value of an ASCII hex digit, or -1 (other scripts' digits, which {@link Character#digit} reads, are not). */
    private static int hex(char c) {
        return c >= '0' && c <= '9'
                ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    }

    private static McpError error(int code, String message) {
        return McpError.builder(code).message(message).build();
    }

    /**
     * A value of a resource template as a client fills it in: each {@code %XX} escape is a byte of its UTF-8 form, and
     * every other character is itself (a {@code %} not followed by two hex digits included), so that an id written
     * as it is still names itself.
     */
    static String templateValue(String value, String uri) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(value.length());
        for (int i = 0; i < value.length(); ) {
            char c = value.charAt(i);
            if (c == '%' && i + 2 < value.length() && hex(value.charAt(i + 1)) >= 0 && hex(value.charAt(i + 2)) >= 0) {
                bytes.write(hex(value.charAt(i + 1)) << 4 | hex(value.charAt(i + 2)));
                i += 3;
                continue;
            }
            int cp = value.codePointAt(i);
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
                throw error(-32602, "resource " + uri + ": an unpaired surrogate, which is not text");
            }
            byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
            bytes.write(utf8, 0, utf8.length);
            i += Character.charCount(cp);
        }
        return Utf8.decode(bytes.toByteArray())
                .orElseThrow(() -> error(-32602, "resource " + uri + ": percent-encoded bytes that are not UTF-8"));
    }

    /** The tools' input schemas checked with the JSON Schema validator Engram ships (2020-12). */
    private static final class SchemaValidator implements JsonSchemaValidator {
        private static final ObjectMapper PLAIN = JsonMapper.builder().build();
        private final Map<Map<String, Object>, JsonSchema> schemas = new ConcurrentHashMap<>();
        private final Function<Map<String, Object>, JsonSchema> compile = s ->
                JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(PLAIN.valueToTree(s));

        @Override
        public ValidationResponse validate(Map<String, Object> schema, Object content) {
            JsonNode tree = PLAIN.valueToTree(content);
            List<String> problems = new ArrayList<>();
            for (ValidationMessage m : schemas.computeIfAbsent(schema, compile).validate(tree)) {
                problems.add(m.getMessage());
            }
            return problems.isEmpty()
                    ? ValidationResponse.asValid(tree.toString())
                    : ValidationResponse.asInvalid(problems.stream().sorted().collect(Collectors.joining("; ")));
        }
    }
}
