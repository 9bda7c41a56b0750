package dev.engram.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.engram.metrics.Meters;
import dev.engram.query.MemoryQueries;
import dev.engram.schemas.Json;
import dev.engram.schemas.MemoryCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP query layer of one instance. Namespace routes are answered locally when this instance owns the namespace
 * and forwarded to the owner otherwise, so any instance answers any namespace.
 */
final class HttpApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    static final String FORWARDED_HEADER = "X-Engram-Forwarded";
    private static final int MAX_BODY_BYTES = 64 * 1024;
    private static final int MAX_QUERY_CHARS = 4096;
    private static final int MAX_TOP_K = 100;
    /** The mode used when a request names none: the best measured on the evaluation sets (see README). */
    static final String DEFAULT_MODE = "hybrid";

    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern NAMESPACE_ROUTE = Pattern.compile("^/v1/namespaces/([^/]+)(/.*)?$");
    private static final Pattern DOCUMENT_ROUTE = Pattern.compile("^/documents/([^/]+)$");
    private static final Pattern GIST_ROUTE = Pattern.compile("^/documents/([^/]+)/gist$");
    private static final Pattern ENTITY_ROUTE = Pattern.compile("^/entities/([^/]+)$");
    private static final Pattern ENTITY_ID = Pattern.compile("[0-9a-f]{32}");

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient client = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .executor(executor)
            .build();
    private final NamespaceRouter router;
    private final MemoryQueries queries;
    private final Supplier<Map<String, Object>> health;
    private final Supplier<String> scrape;
    private final Meters meters;

    HttpApi(
            InetSocketAddress bind,
            NamespaceRouter router,
            MemoryQueries queries,
            Supplier<Map<String, Object>> health,
            Supplier<String> scrape,
            Meters meters)
            throws IOException {
        this.router = router;
        this.queries = queries;
        this.health = health;
        this.scrape = scrape;
        this.meters = meters;
        // Replies go out as headers then body: without TCP_NODELAY, Nagle's algorithm holds the body back until the
        // client's delayed ACK (tens of milliseconds on every request). The JDK server reads this once, at first use.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        this.server = HttpServer.create(bind, 128);
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        long t0 = System.nanoTime();
        String route = "unknown";
        int status;
        try (exchange) {
            String path = exchange.getRequestURI().getRawPath();
            String method = exchange.getRequestMethod();
            try {
                if (path.equals("/metrics")) {
                    route = "/metrics";
                    requireMethod(method, "GET");
                    status = 200;
                    send(
                            exchange,
                            200,
                            "text/plain; version=0.0.4; charset=utf-8",
                            scrape.get().getBytes(StandardCharsets.UTF_8));
                } else if (path.equals("/v1/health")) {
                    route = "/v1/health";
                    requireMethod(method, "GET");
                    Map<String, Object> h = health.get();
                    status = Boolean.TRUE.equals(h.get("serving")) ? 200 : 503;
                    sendJson(exchange, status, h);
                } else {
                    Matcher m = NAMESPACE_ROUTE.matcher(path);
                    if (!m.matches()) {
                        throw ApiException.notFound("no route for " + path);
                    }
                    String ns = decode(m.group(1));
                    String rest = m.group(2) == null ? "" : m.group(2);
                    route = routeName(rest);
                    if (!NAMESPACE.matcher(ns).matches()) {
                        throw ApiException.badRequest("namespace must match " + NAMESPACE.pattern());
                    }
                    status = namespaceRoute(exchange, method, ns, rest);
                }
            } catch (ApiException e) {
                status = e.status();
                sendError(exchange, e);
            } catch (InvalidStateStoreException e) {
                ApiException unavailable =
                        ApiException.unavailable("state is moving between instances: " + e.getMessage());
                status = unavailable.status();
                sendError(exchange, unavailable);
            } catch (RuntimeException e) {
                LOG.warn("request {} {} failed", method, path, e);
                ApiException internal = new ApiException(
                        500, "internal", "internal error: " + e.getClass().getSimpleName());
                status = internal.status();
                sendError(exchange, internal);
            }
            meters.httpRequest(route, method, status, Duration.ofNanos(System.nanoTime() - t0));
        }
    }

    private static String routeName(String rest) {
        if (rest.isEmpty()) {
            return "/v1/namespaces/{ns}";
        } else if (rest.equals("/retrieve")) {
            return "/v1/namespaces/{ns}/retrieve";
        } else if (rest.equals("/answer")) {
            return "/v1/namespaces/{ns}/answer";
        } else if (rest.equals("/entities")) {
            return "/v1/namespaces/{ns}/entities";
        } else if (rest.equals("/reviews")) {
            return "/v1/namespaces/{ns}/reviews";
        } else if (rest.equals("/merges")) {
            return "/v1/namespaces/{ns}/merges";
        } else if (rest.equals("/themes")) {
            return "/v1/namespaces/{ns}/themes";
        } else if (GIST_ROUTE.matcher(rest).matches()) {
            return "/v1/namespaces/{ns}/documents/{id}/gist";
        } else if (rest.startsWith("/entities/")) {
            return "/v1/namespaces/{ns}/entities/{id}";
        } else if (rest.startsWith("/documents/")) {
            return "/v1/namespaces/{ns}/documents/{id}";
        }
        return "unknown";
    }

    private int namespaceRoute(HttpExchange exchange, String method, String ns, String rest) throws IOException {
        byte[] body = readBody(exchange);
        if (rest.equals("/answer") && !queries.canAnswer()) {
            throw new ApiException(
                    501,
                    "not_configured",
                    "answering needs an LLM: set ENGRAM_UNDERSTANDING=llm, ENGRAM_LLM_BASE_URL and ENGRAM_LLM_MODEL");
        }
        NamespaceRouter.Owner owner = router.ownerOf(ns);
        if (owner instanceof NamespaceRouter.Remote remote) {
            if (exchange.getRequestHeaders().containsKey(FORWARDED_HEADER)) {
                throw ApiException.unavailable("namespace '" + ns + "' moved while the request was forwarded");
            }
            return forward(exchange, remote.host(), method, body);
        }
        Map<String, Object> result;
        if (rest.isEmpty()) {
            requireMethod(method, "GET");
            result = queries.namespace(ns);
        } else if (rest.equals("/retrieve")) {
            requireMethod(method, "POST");
            result = retrieve(ns, body, false);
        } else if (rest.equals("/answer")) {
            requireMethod(method, "POST");
            result = retrieve(ns, body, true);
        } else if (rest.equals("/reviews")) {
            requireMethod(method, "GET");
            result = queries.reviews(ns, limit(exchange));
        } else if (rest.equals("/merges") && method.equals("POST")) {
            result = command(ns, body);
            result.put("served_by", router.self().host() + ":" + router.self().port());
            sendJson(exchange, 202, result);
            return 202;
        } else if (rest.equals("/merges")) {
            requireMethod(method, "GET");
            result = queries.merges(ns, limit(exchange));
        } else if (rest.equals("/themes")) {
            requireMethod(method, "GET");
            result = queries.themes(ns);
        } else if (GIST_ROUTE.matcher(rest).matches()) {
            requireMethod(method, "GET");
            Matcher g = GIST_ROUTE.matcher(rest);
            result = queries.gist(ns, documentId(g.matches() ? g.group(1) : ""));
        } else if (rest.equals("/entities")) {
            requireMethod(method, "GET");
            String name = queryParam(exchange.getRequestURI(), "name");
            if (name == null || name.isBlank()) {
                throw ApiException.badRequest("query parameter 'name' is required");
            }
            if (name.length() > 512) {
                throw ApiException.badRequest("'name' is longer than 512 characters");
            }
            result = queries.entities(ns, name);
        } else if (rest.startsWith("/entities/")) {
            requireMethod(method, "GET");
            Matcher m = ENTITY_ROUTE.matcher(rest);
            String id = m.matches() ? decode(m.group(1)) : "";
            if (!ENTITY_ID.matcher(id).matches()) {
                throw ApiException.badRequest("entity id must be 32 lowercase hex digits");
            }
            result = queries.entity(ns, id);
        } else {
            Matcher d = DOCUMENT_ROUTE.matcher(rest);
            if (!d.matches()) {
                throw ApiException.notFound("no route for /v1/namespaces/" + ns + rest);
            }
            requireMethod(method, "GET");
            result = queries.document(ns, documentId(d.group(1)));
        }
        result.put("served_by", router.self().host() + ":" + router.self().port());
        sendJson(exchange, 200, result);
        return 200;
    }

    private static String documentId(String encoded) {
        String id = decode(encoded);
        if (id.isEmpty() || id.length() > 512 || id.chars().anyMatch(Character::isISOControl)) {
            throw ApiException.badRequest("document id must be 1-512 characters without control characters");
        }
        return id;
    }

    /** The request body as a JSON object, or a 400 that shows what one looks like. */
    private static JsonNode jsonObject(byte[] body, String example) {
        JsonNode request;
        try {
            request = Json.mapper().readTree(body);
        } catch (IOException e) {
            throw ApiException.badRequest("body is not valid JSON: " + e.getMessage());
        }
        if (request == null || !request.isObject()) {
            throw ApiException.badRequest("body must be a JSON object like " + example);
        }
        return request;
    }

    /** {@code {"op": "split" | "merge" | "clear", "entity_id": ..., "other_id": ..., "reason": ...}}. */
    private Map<String, Object> command(String ns, byte[] body) {
        JsonNode request = jsonObject(body, "{\"op\": \"split\", \"entity_id\": \"…\", \"other_id\": \"…\"}");
        MemoryCommand.Op op =
                switch (request.path("op").asText("")) {
                    case "split" -> MemoryCommand.Op.SPLIT;
                    case "merge" -> MemoryCommand.Op.MERGE;
                    case "clear" -> MemoryCommand.Op.CLEAR;
                    default -> throw ApiException.badRequest("'op' must be one of split, merge, clear");
                };
        String a = request.path("entity_id").asText("");
        String b = request.path("other_id").asText("");
        if (!request.path("entity_id").isTextual()
                || !request.path("other_id").isTextual()
                || !ENTITY_ID.matcher(a).matches()
                || !ENTITY_ID.matcher(b).matches()) {
            throw ApiException.badRequest("'entity_id' and 'other_id' must be entity ids (32 lowercase hex digits)");
        }
        JsonNode reason = request.path("reason");
        if (!reason.isMissingNode()
                && !reason.isNull()
                && (!reason.isTextual() || reason.asText().length() > 2000)) {
            throw ApiException.badRequest("'reason' must be a string of at most 2000 characters");
        }
        return queries.command(ns, op, a, b, reason.isTextual() ? reason.asText() : "");
    }

    /** The {@code limit} query parameter: 1 to 1000, 100 when absent. */
    private static int limit(HttpExchange exchange) {
        String limit = queryParam(exchange.getRequestURI(), "limit");
        int n;
        try {
            n = limit == null ? 100 : Integer.parseInt(limit);
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("'limit' must be an integer from 1 to 1000");
        }
        if (n < 1 || n > 1000) {
            throw ApiException.badRequest("'limit' must be an integer from 1 to 1000");
        }
        return n;
    }

    private Map<String, Object> retrieve(String ns, byte[] body, boolean answer) {
        JsonNode request = jsonObject(body, "{\"query\": \"...\", \"top_k\": 5}");
        JsonNode query = request.get("query");
        if (query == null || !query.isTextual() || query.asText().isBlank()) {
            throw ApiException.badRequest("'query' must be a non-empty string");
        }
        if (query.asText().length() > MAX_QUERY_CHARS) {
            throw ApiException.badRequest("'query' is longer than " + MAX_QUERY_CHARS + " characters");
        }
        JsonNode modeNode = request.get("mode");
        if (modeNode != null && !modeNode.isNull() && !modeNode.isTextual()) {
            throw ApiException.badRequest("'mode' must be a string");
        }
        String mode = modeNode == null || modeNode.isNull() ? DEFAULT_MODE : modeNode.asText();
        JsonNode topKNode = request.get("top_k");
        int topK = 5;
        if (topKNode != null && !topKNode.isNull()) {
            if (!topKNode.isIntegralNumber() || topKNode.asLong() < 1 || topKNode.asLong() > MAX_TOP_K) {
                throw ApiException.badRequest("'top_k' must be an integer from 1 to " + MAX_TOP_K);
            }
            topK = topKNode.asInt();
        }
        Map<String, Double> params = new LinkedHashMap<>();
        JsonNode paramsNode = request.get("params");
        if (paramsNode != null && !paramsNode.isNull()) {
            if (!paramsNode.isObject()) {
                throw ApiException.badRequest("'params' must be an object of numbers, e.g. {\"epsilon\": 0.9}");
            }
            for (var it = paramsNode.fields(); it.hasNext(); ) {
                var e = it.next();
                if (!e.getValue().isNumber()) {
                    throw ApiException.badRequest("parameter '" + e.getKey() + "' must be a number");
                }
                params.put(e.getKey(), e.getValue().asDouble());
            }
        }
        long t0 = System.nanoTime();
        Map<String, Object> out = answer
                ? queries.answer(ns, query.asText(), mode, topK, params)
                : queries.retrieve(ns, query.asText(), mode, topK, params);
        meters.retrieval(mode, Duration.ofNanos(System.nanoTime() - t0));
        return out;
    }

    private int forward(HttpExchange exchange, HostInfo host, String method, byte[] body) throws IOException {
        URI target = URI.create("http://" + host.host() + ":" + host.port()
                + exchange.getRequestURI().getRawPath()
                + (exchange.getRequestURI().getRawQuery() == null
                        ? ""
                        : "?" + exchange.getRequestURI().getRawQuery()));
        HttpRequest request = HttpRequest.newBuilder(target)
                .timeout(Duration.ofSeconds(30))
                .header(
                        FORWARDED_HEADER,
                        router.self().host() + ":" + router.self().port())
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body.length == 0
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        HttpResponse<byte[]> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw ApiException.unavailable("owner " + host.host() + ":" + host.port() + " is unreachable: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted while forwarding");
        }
        response.headers().firstValue("Retry-After").ifPresent(v -> exchange.getResponseHeaders()
                .set("Retry-After", v));
        send(
                exchange,
                response.statusCode(),
                response.headers().firstValue("Content-Type").orElse("application/json"),
                response.body());
        return response.statusCode();
    }

    private static void requireMethod(String method, String allowed) {
        if (!method.equals(allowed)) {
            throw new ApiException(405, "method_not_allowed", "use " + allowed);
        }
    }

    private static byte[] readBody(HttpExchange exchange) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
            if (body.length > MAX_BODY_BYTES) {
                throw new ApiException(413, "too_large", "request body is larger than " + MAX_BODY_BYTES + " bytes");
            }
            return body;
        }
    }

    static String queryParam(URI uri, String name) {
        String raw = uri.getRawQuery();
        if (raw == null) {
            return null;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String k = decode(eq < 0 ? pair : pair.substring(0, eq));
            if (k.equals(name)) {
                return eq < 0 ? "" : decode(pair.substring(eq + 1));
            }
        }
        return null;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("bad percent-encoding in '" + s + "'");
        }
    }

    private static void sendError(HttpExchange exchange, ApiException e) throws IOException {
        if (e.retryAfterSeconds() != null) {
            exchange.getResponseHeaders().set("Retry-After", Integer.toString(e.retryAfterSeconds()));
        }
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", e.code());
        error.put("message", e.getMessage());
        sendJson(exchange, e.status(), Map.of("error", error));
    }

    private static void sendJson(HttpExchange exchange, int status, Object body) throws IOException {
        byte[] bytes;
        try {
            bytes = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IOException("cannot write the response", e);
        }
        send(exchange, status, "application/json", bytes);
    }

    private static void send(HttpExchange exchange, int status, String contentType, byte[] bytes) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
