package dev.engram.service.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Pattern;
import dev.engram.schemas.Json;
import dev.engram.service.app.DocumentWriter;
import dev.engram.service.http.ApiException;
import dev.engram.service.http.ApiKeys;
import dev.engram.service.http.HttpApi;
import dev.engram.service.http.HttpApi.Reply;
import dev.engram.service.http.HttpApi.Request;
import dev.engram.service.http.HttpApi.Route;
import dev.engram.service.http.RequestSlots;
import dev.engram.service.http.Routes;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every namespace's memory, reached in process through the API's {@link Routes route table}: a call names a route and
 * is answered by the route's handler when this instance owns the namespace, and by the owner's API otherwise. The HTTP
 * server, the MCP tools and the construction agent all reach memory through here, so every call passes the same
 * validation and key checks and is routed to the owner in one place, and no part of the instance calls its own port.
 */
public final class MemoryAccess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryAccess.class);
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    /** The longest a call to the owner may take, answering included: an LLM answer with retries fits. */
    private static final Duration OWNER_TIMEOUT = Duration.ofMinutes(10);

    /**
     * Who calls: the key's holder (null when keys are off, or for the instance's own agent), the key as presented,
     * which the owner checks again when the call goes there, and the request slots a call takes one of for its
     * namespace (null: none, for the instance's own calls).
     */
    public record Caller(ApiKeys.Key key, String presentedKey, RequestSlots slots) {
        static final Caller INSTANCE = new Caller(null, null, null);

        Caller(ApiKeys.Key key, String presentedKey) {
            this(key, presentedKey, null);
        }
    }

    /** An answer as the API gives it: status, content type, body, and {@code Retry-After} when there is one. */
    public record Answer(int status, String contentType, byte[] body, String retryAfter) {

        public boolean ok() {
            return status / 100 == 2;
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** The body as JSON (a missing node when it is not JSON). */
        public JsonNode json() {
            return Json.treeOrMissing(body);
        }

        /** The API's error message of an answer that is not a success, with its status. */
        public String error() {
            JsonNode message = json().path("error").path("message");
            return "HTTP " + status + (message.isTextual() ? ": " + message.asText() : "");
        }
    }

    private final Map<String, Route> routes = new LinkedHashMap<>();
    private final List<Route> table;
    private final NamespaceRouter router;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient client = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .executor(executor)
            .build();

    public MemoryAccess(List<Route> table, NamespaceRouter router) {
        this.table = List.copyOf(table);
        this.router = router;
        for (Route r : table) {
            routes.put(r.method() + " " + r.template(), r);
        }
    }

    public List<Route> table() {
        return table;
    }

    /** Calls {@code method template} with its path parameters, query parameters and body, as {@code caller}. */
    public Answer call(
            Caller caller,
            String method,
            String template,
            Map<String, String> path,
            Map<String, List<String>> query,
            byte[] body) {
        return call(caller, method, template, path, query, body, OWNER_TIMEOUT);
    }

    /** As {@link #call}, waiting at most {@code timeout} for the owner when another instance owns the namespace. */
    public Answer call(
            Caller caller,
            String method,
            String template,
            Map<String, String> path,
            Map<String, List<String>> query,
            byte[] body,
            Duration timeout) {
        Route route = routes.get(method + " " + template);
        if (route == null) {
            throw new IllegalArgumentException("no route " + method + " " + template);
        }
        String ns = path.get("ns");
        authorize(route, caller.key(), ns);
        if (caller.slots() != null) {
            caller.slots().take(ns);
        }
        try {
            return serve(
                    route, new Request(method, path, query, body, caller.key(), caller.presentedKey()), false, timeout);
        } finally {
            if (caller.slots() != null) {
                caller.slots().release(ns);
            }
        }
    }

    /**
     * Serves a request whose key was checked: by the handler when this instance owns its namespace (or it has none),
     * else by the owner. {@code forwarded}: the request came from another instance, which took this one for the owner.
     */
    public Answer serve(Route route, Request request, boolean forwarded) {
        return serve(route, request, forwarded, OWNER_TIMEOUT);
    }

    private Answer serve(Route route, Request request, boolean forwarded, Duration timeout) {
        if (route.namespaced()) {
            String ns = request.namespace();
            if (!NAMESPACE.matcher(ns).matches()) {
                throw ApiException.badRequest("namespace must match " + NAMESPACE.pattern());
            }
            if (route.precheck() != null) {
                route.precheck().handle(request);
            }
            if (router.ownerOf(ns) instanceof NamespaceRouter.Remote remote) {
                if (forwarded) {
                    throw ApiException.unavailable("namespace '" + ns + "' moved while the request was forwarded");
                }
                return forward(remote.host(), route, request, timeout);
            }
        }
        Reply reply = route.handler().handle(request);
        if (reply.body() instanceof String text) {
            return new Answer(reply.status(), reply.contentType(), text.getBytes(StandardCharsets.UTF_8), null);
        }
        ObjectNode body = Json.mapper().valueToTree(reply.body());
        if (route.namespaced()) {
            body.put("served_by", router.self().host() + ":" + router.self().port());
        }
        return json(reply.status(), body);
    }

    /**
     * {@code body} as compact JSON (no indentation: a document's deeply nested metadata would otherwise come back many
     * times its size, and an MCP client would pay for the spaces in its model's context); a 500 that says so when it
     * cannot be written.
     */
    public static Answer json(int status, Object body) {
        try {
            return new Answer(status, "application/json", Json.mapper().writeValueAsBytes(body), null);
        } catch (JsonProcessingException e) {
            LOG.warn("a response cannot be written as JSON", e);
            return new Answer(
                    500,
                    "application/json",
                    Json.toBytes(
                            HttpApi.errorBody("internal", "internal error: the response cannot be written as JSON")),
                    null);
        }
    }

    /**
     * 403 when the key's role or namespaces do not reach the route (a missing key is the HTTP server's 401). Every hop
     * checks, so a forwarded request is no way around it.
     */
    public static void authorize(Route route, ApiKeys.Key key, String namespace) {
        if (key == null || route.role() == null) {
            return;
        }
        if (!key.role().includes(route.role())) {
            throw new ApiException(
                    403, "forbidden", "this key's role cannot " + route.method() + " " + route.template());
        }
        if (route.namespaced() && !key.allows(namespace)) {
            throw new ApiException(403, "forbidden", "this key has no access to namespace '" + namespace + "'");
        }
    }

    /** The same call on the owner's API, with the caller's key: the owner checks it again. */
    private Answer forward(HostInfo host, Route route, Request request, Duration timeout) {
        URI target = URI.create("http://" + host.host() + ":" + host.port() + path(route.template(), request.path())
                + query(request.parameters()));
        HttpRequest.Builder forwarded = HttpRequest.newBuilder(target)
                .timeout(timeout)
                .header(
                        HttpApi.FORWARDED_HEADER,
                        router.self().host() + ":" + router.self().port())
                .header("Content-Type", "application/json")
                .method(
                        request.method(),
                        request.body().length == 0
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(request.body()));
        if (request.presentedKey() != null) {
            forwarded.header("Authorization", "Bearer " + request.presentedKey());
        }
        HttpResponse<byte[]> response;
        try {
            response = client.send(forwarded.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (HttpTimeoutException e) {
            throw ApiException.unavailable(
                    "the instance that owns the namespace did not answer in time; retry shortly");
        } catch (IOException e) {
            LOG.warn(
                    "calling {} {} on {}:{} failed: {}",
                    request.method(),
                    target,
                    host.host(),
                    host.port(),
                    e.toString());
            throw ApiException.unavailable("the instance that owns the namespace is unreachable; retry shortly");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted while calling the owner of the namespace");
        }
        return new Answer(
                response.statusCode(),
                response.headers().firstValue("Content-Type").orElse("application/json"),
                response.body(),
                response.headers().firstValue("Retry-After").orElse(null));
    }

    /** A template with its parameters filled in, each percent-encoded as one segment. */
    static String path(String template, Map<String, String> params) {
        StringJoiner out = new StringJoiner("/");
        for (String part : template.split("/", -1)) {
            out.add(
                    part.startsWith("{") && part.endsWith("}")
                            ? DocumentWriter.segment(params.get(part.substring(1, part.length() - 1)))
                            : part);
        }
        return out.toString();
    }

    private static String query(Map<String, List<String>> params) {
        StringJoiner out = new StringJoiner("&", "?", "").setEmptyValue("");
        params.forEach((k, values) -> values.forEach(v -> out.add(form(k) + "=" + form(v))));
        return out.toString();
    }

    private static String form(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
