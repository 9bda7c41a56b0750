package dev.engram.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.Utf8;
import dev.engram.service.HttpApi.Reply;
import dev.engram.service.HttpApi.Request;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The Model Context Protocol at {@code POST /mcp} (streamable HTTP, answered as JSON; no server-initiated stream, so
 * {@code GET} is 405 as the transport allows), for LLM applications to plug Engram in as their memory. Stateless: no
 * session id. Every tool is one call of the HTTP API on this instance with the caller's own key, so each keeps the
 * API's validation, limits, key checks (a read key cannot {@code remember}) and routing to the namespace's owner.
 */
final class McpEndpoint {

    /** Protocol revisions this endpoint speaks, newest first. */
    static final List<String> VERSIONS = List.of("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05");

    private static final Set<String> TOOLS =
            Set.of("remember", "forget", "retrieve", "answer", "entity", "document_status");

    /** The tools' descriptions, input schemas included. */
    private static final JsonNode TOOL_LIST = tools().path("tools");

    private final String host;
    private final IntSupplier port;
    private final Supplier<List<String>> namespaces;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * @param host the address this instance's API answers on, for its own calls
     * @param port its port, known once it serves
     * @param namespaces the namespaces this instance's memory holds, for {@code resources/list}
     */
    McpEndpoint(String host, IntSupplier port, Supplier<List<String>> namespaces) {
        this.host = host;
        this.port = port;
        this.namespaces = namespaces;
    }

    Reply handle(Request r) {
        JsonNode message;
        try {
            // from the strictly decoded text: one message, no member twice, nothing after it, and UTF-8 only
            String text = Utf8.decode(r.body()).orElse(null);
            if (text == null) {
                return Reply.json(400, error(null, -32700, "parse error: the message is not valid UTF-8"));
            }
            message = Json.strictTrees().readTree(text);
        } catch (IOException e) {
            return Reply.json(400, error(null, -32700, "parse error: " + Json.problem(e)));
        }
        if (message != null && message.isArray()) {
            return Reply.json(400, error(null, -32600, "expected one JSON-RPC message (batches are not supported)"));
        }
        if (message == null || !message.isObject()) {
            return Reply.json(400, error(null, -32600, "expected a JSON-RPC 2.0 message: a JSON object"));
        }
        if (!"2.0".equals(message.path("jsonrpc").textValue())) {
            return Reply.json(400, error(null, -32600, "expected \"jsonrpc\": \"2.0\""));
        }
        JsonNode id = message.get("id");
        if (id != null && !(id.isTextual() || id.isIntegralNumber())) {
            return Reply.json(400, error(null, -32600, "a request id is a string or an integer"));
        }
        String method = message.path("method").asText("");
        if (id == null || !message.has("method")) {
            // a notification (initialized, cancelled) or a client's response: nothing to answer
            return new Reply(202, "application/json", "");
        }
        JsonNode params = message.path("params");
        try {
            ObjectNode result =
                    switch (method) {
                        case "initialize" -> initialize(params);
                        case "ping" -> Json.mapper().createObjectNode();
                        case "tools/list" -> tools();
                        case "tools/call" -> call(params, r.presentedKey());
                        case "resources/list" -> resources(r);
                        case "resources/templates/list" -> templates();
                        case "resources/read" -> read(params, r.presentedKey());
                        default -> throw new RpcError(-32601, "method not found: " + method);
                    };
            ObjectNode reply = Json.mapper().createObjectNode();
            reply.put("jsonrpc", "2.0");
            reply.set("id", id);
            reply.set("result", result);
            return Reply.json(200, reply);
        } catch (RpcError e) {
            return Reply.json(200, error(id, e.code, e.getMessage()));
        }
    }

    private static final class RpcError extends RuntimeException {
        private final int code;

        RpcError(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    private static ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode reply = Json.mapper().createObjectNode();
        reply.put("jsonrpc", "2.0");
        if (id == null) {
            reply.putNull("id");
        } else {
            reply.set("id", id);
        }
        ObjectNode e = reply.putObject("error");
        e.put("code", code);
        e.put("message", message);
        return reply;
    }

    private static ObjectNode initialize(JsonNode params) {
        String asked = params.path("protocolVersion").asText("");
        ObjectNode result = Json.mapper().createObjectNode();
        result.put("protocolVersion", VERSIONS.contains(asked) ? asked : VERSIONS.get(0));
        ObjectNode capabilities = result.putObject("capabilities");
        capabilities.putObject("tools").put("listChanged", false);
        capabilities.putObject("resources").put("listChanged", false).put("subscribe", false);
        ObjectNode info = result.putObject("serverInfo");
        info.put("name", "engram");
        info.put("version", "1");
        result.put(
                "instructions",
                "Engram is a long-term memory. 'remember' a document (it is read into passages, entities and facts),"
                        + " 'retrieve' the passages that answer a question, 'forget' a document exactly; every call"
                        + " names a namespace.");
        return result;
    }

    private static ObjectNode tools() {
        ObjectNode result = Json.mapper().createObjectNode();
        ArrayNode tools = result.putArray("tools");
        tools.add(tool(
                "remember",
                "Remember a document (create or replace it by id) and wait until it is in memory.",
                props("namespace", "id", "text", "title", "source"),
                List.of("namespace", "id", "text")));
        tools.add(tool(
                "forget",
                "Forget a document: its passages, facts and the entities only it supported leave memory.",
                props("namespace", "id"),
                List.of("namespace", "id")));
        ObjectNode query = props("namespace", "query", "mode");
        query.putObject("top_k")
                .put("type", "integer")
                .put("minimum", 1)
                .put("maximum", 100)
                .put("description", "how many passages (default 5)");
        tools.add(tool(
                "retrieve",
                "The passages of memory that best answer a query, with their documents.",
                query,
                List.of("namespace", "query")));
        tools.add(tool(
                "answer",
                "Answer a question from memory with the configured LLM, citing passages.",
                query,
                List.of("namespace", "query")));
        tools.add(tool(
                "entity",
                "An entity by name (or by id): its aliases, facts, passages and how it was resolved.",
                props("namespace", "name", "id"),
                List.of("namespace")));
        tools.add(tool(
                "document_status",
                "A document's status (PENDING, READING, VERIFIED, ARCHIVED), version and passages.",
                props("namespace", "id"),
                List.of("namespace", "id")));
        return result;
    }

    private static ObjectNode props(String... names) {
        ObjectNode out = Json.mapper().createObjectNode();
        for (String n : names) {
            ObjectNode p = out.putObject(n).put("type", "string");
            switch (n) {
                case "namespace" ->
                    p.put("pattern", "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$").put("description", "the memory's namespace");
                case "id" -> p.put("description", "the document (or entity) id");
                case "mode" ->
                    p.put(
                            "description",
                            "retrieval mode: hybrid (default), dense, bm25, cogito, como," + " gem, fusion, pabd");
                default -> p.put("description", n);
            }
        }
        return out;
    }

    private static ObjectNode tool(String name, String description, ObjectNode properties, List<String> required) {
        ObjectNode t = Json.mapper().createObjectNode();
        t.put("name", name);
        t.put("description", description);
        ObjectNode schema = t.putObject("inputSchema");
        schema.put("type", "object");
        schema.set("properties", properties);
        ArrayNode req = schema.putArray("required");
        required.forEach(req::add);
        schema.put("additionalProperties", false);
        return t;
    }

    /** A tool call: one API call; an API error is the tool's error result, not a protocol error. */
    private ObjectNode call(JsonNode params, String key) {
        String name = params.path("name").asText("");
        if (!TOOLS.contains(name)) {
            throw new RpcError(-32602, "unknown tool: " + name);
        }
        JsonNode args = params.path("arguments");
        if (!args.isMissingNode() && !args.isObject()) {
            throw new RpcError(-32602, "'arguments' must be an object");
        }
        // the tool's input schema allows no other argument: one that is not there is refused, not ignored
        JsonNode declared = Json.mapper().createObjectNode();
        for (JsonNode t : TOOL_LIST) {
            if (t.path("name").asText().equals(name)) {
                declared = t.path("inputSchema").path("properties");
            }
        }
        for (String given : (Iterable<String>) args::fieldNames) {
            if (!declared.has(given)) {
                throw new RpcError(-32602, "tool '" + name + "' takes no argument '" + given + "'");
            }
        }
        String ns = text(args, "namespace");
        String base = "/v1/namespaces/" + DocumentWriter.segment(ns);
        HttpResponse<String> r =
                switch (name) {
                    case "remember" -> {
                        ObjectNode body = Json.mapper().createObjectNode();
                        body.put("text", text(args, "text"));
                        for (String f : List.of("title", "source")) {
                            if (args.hasNonNull(f)) {
                                body.set(f, args.get(f));
                            }
                        }
                        yield send(
                                "PUT",
                                base + "/documents/" + DocumentWriter.segment(text(args, "id"))
                                        + "?wait=verified&timeout_ms=120000",
                                body,
                                key);
                    }
                    case "forget" ->
                        send(
                                "DELETE",
                                base + "/documents/" + DocumentWriter.segment(text(args, "id"))
                                        + "?wait=archived&timeout_ms=120000",
                                null,
                                key);
                    case "retrieve", "answer" -> {
                        ObjectNode body = Json.mapper().createObjectNode();
                        body.put("query", text(args, "query"));
                        if (args.hasNonNull("mode")) {
                            body.set("mode", args.get("mode"));
                        }
                        if (args.hasNonNull("top_k")) {
                            body.set("top_k", args.get("top_k"));
                        }
                        yield send("POST", base + "/" + name, body, key);
                    }
                    case "entity" ->
                        args.hasNonNull("id")
                                ? send("GET", base + "/entities/" + DocumentWriter.segment(text(args, "id")), null, key)
                                : send(
                                        "GET",
                                        base + "/entities?name=" + DocumentWriter.segment(text(args, "name")),
                                        null,
                                        key);
                    default -> send("GET", base + "/documents/" + DocumentWriter.segment(text(args, "id")), null, key);
                };
        ObjectNode result = Json.mapper().createObjectNode();
        boolean ok = r.statusCode() / 100 == 2;
        result.putArray("content").addObject().put("type", "text").put("text", r.body());
        result.put("isError", !ok);
        if (ok) {
            try {
                JsonNode structured = Json.mapper().readTree(r.body());
                if (structured != null && structured.isObject()) {
                    result.set("structuredContent", structured);
                }
            } catch (IOException e) {
                // the text content carries it
            }
        }
        return result;
    }

    private static String text(JsonNode args, String name) {
        JsonNode v = args.get(name);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new RpcError(-32602, "argument '" + name + "' must be a non-empty string");
        }
        return v.asText();
    }

    private ObjectNode resources(Request r) {
        ObjectNode result = Json.mapper().createObjectNode();
        ArrayNode list = result.putArray("resources");
        for (String ns : namespaces.get()) {
            if (r.caller() == null || r.caller().allows(ns)) {
                list.addObject()
                        .put("uri", "engram://namespaces/" + ns)
                        .put("name", ns)
                        .put("description", "namespace " + ns + ": documents by status, passages, entities")
                        .put("mimeType", "application/json");
            }
        }
        return result;
    }

    private static ObjectNode templates() {
        ObjectNode result = Json.mapper().createObjectNode();
        ArrayNode list = result.putArray("resourceTemplates");
        list.addObject()
                .put("uriTemplate", "engram://namespaces/{namespace}")
                .put("name", "namespace")
                .put("description", "a namespace's documents by status, passages and entities")
                .put("mimeType", "application/json");
        list.addObject()
                .put("uriTemplate", "engram://namespaces/{namespace}/documents/{id}")
                .put("name", "document")
                .put("description", "a document's status, version and passages")
                .put("mimeType", "application/json");
        return result;
    }

    private ObjectNode read(JsonNode params, String key) {
        String uri = params.path("uri").asText("");
        String prefix = "engram://namespaces/";
        if (!uri.startsWith(prefix) || uri.length() == prefix.length()) {
            throw new RpcError(-32602, "unknown resource: " + uri);
        }
        String[] parts = uri.substring(prefix.length()).split("/", 3);
        String path;
        // the template's values as a client fills them in: percent-encoded ("a%2Fb" is the id "a/b"); an id with a
        // slash may also come as it is, after "documents/"
        if (parts.length == 1) {
            path = "/v1/namespaces/" + DocumentWriter.segment(templateValue(parts[0], uri));
        } else if (parts.length == 3 && parts[1].equals("documents") && !parts[2].isEmpty()) {
            path = "/v1/namespaces/" + DocumentWriter.segment(templateValue(parts[0], uri)) + "/documents/"
                    + DocumentWriter.segment(templateValue(parts[2], uri));
        } else {
            throw new RpcError(-32602, "unknown resource: " + uri);
        }
        HttpResponse<String> r = send("GET", path, null, key);
        if (r.statusCode() != 200) {
            throw new RpcError(-32002, "resource " + uri + ": " + apiError(r));
        }
        ObjectNode result = Json.mapper().createObjectNode();
        result.putArray("contents")
                .addObject()
                .put("uri", uri)
                .put("mimeType", "application/json")
                .put("text", r.body());
        return result;
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
            if (c == '%'
                    && i + 2 < value.length()
                    && Character.digit(value.charAt(i + 1), 16) >= 0
                    && Character.digit(value.charAt(i + 2), 16) >= 0) {
                bytes.write(Character.digit(value.charAt(i + 1), 16) << 4 | Character.digit(value.charAt(i + 2), 16));
                i += 3;
                continue;
            }
            int cp = value.codePointAt(i);
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
                throw new RpcError(-32602, "resource " + uri + ": an unpaired surrogate, which is not text");
            }
            byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
            bytes.write(utf8, 0, utf8.length);
            i += Character.charCount(cp);
        }
        return Utf8.decode(bytes.toByteArray())
                .orElseThrow(
                        () -> new RpcError(-32602, "resource " + uri + ": percent-encoded bytes that are not UTF-8"));
    }

    /** An API answer that is not a success, as its message says it (HTTP status and error message). */
    private static String apiError(HttpResponse<String> r) {
        try {
            JsonNode message = Json.mapper().readTree(r.body()).path("error").path("message");
            if (message.isTextual()) {
                return "HTTP " + r.statusCode() + ": " + message.asText();
            }
        } catch (IOException | RuntimeException e) {
            // not the API's JSON error: its status says enough
        }
        return "HTTP " + r.statusCode();
    }

    private HttpResponse<String> send(String method, String path, JsonNode body, String key) {
        String authority = host.contains(":") ? "[" + host + "]" : host; // an IPv6 literal
        try {
            return ApiCalls.send(
                    http,
                    "http://" + authority + ":" + port.getAsInt(),
                    method,
                    path,
                    body == null ? null : body.toString(),
                    key,
                    Duration.ofMinutes(3));
        } catch (IOException e) {
            throw new RpcError(-32603, "this instance's API did not answer: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcError(-32603, "interrupted");
        }
    }
}
