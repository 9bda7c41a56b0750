package dev.engram.service.http;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.schemas.Utf8;
import dev.engram.service.cluster.MemoryAccess;
import dev.engram.service.cluster.NamespaceRouter;
import dev.engram.service.mcp.McpEndpoint;
import io.javalin.Javalin;
import io.javalin.compression.CompressionStrategy;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.http.HttpResponseException;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.ConnectionLimit;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.URIUtil;
import org.eclipse.jetty.util.UrlEncoded;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP server of one instance, on Javalin (Jetty 12): each {@link Routes route} is a Javalin endpoint whose
 * requests pass the same checks in one place — host and origin, key and role, body size and the instance's body
 * budget, request slots — and are answered locally when this instance owns the namespace or forwarded to the owner
 * otherwise (so any instance answers any namespace). Every failure, Jetty's own refusals of malformed requests
 * included, is a JSON error ({@link ApiException#of}).
 */
public final class HttpApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    public static final String FORWARDED_HEADER = "X-Engram-Forwarded";
    public static final int MAX_BODY_BYTES = 64 * 1024;
    /** A connection that sends or reads nothing for this long is closed: a stalled client holds no connection. */
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Open connections at most: past it the server stops accepting until one closes, which bounds the threads and file
     * descriptors clients can hold; a proxy in front limits them per client.
     */
    private static final int MAX_CONNECTIONS = 1024;
    /**
     * Bytes of request bodies held at once, at most, from their first byte until they are answered. Bodies are read
     * before a request takes one of the slots that bound the requests served at once, so clients that send their
     * bodies slowly (or never) hold no slot; this bounds the memory they can hold instead.
     */
    private static final int BODY_BUDGET_BYTES = 64 << 20;

    private static final Set<String> STANDARD_METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");

    /**
     * Percent-encoded {@code /} and {@code %} may be part of a path segment (a document id {@code notes/a.md} is sent
     * as {@code notes%2Fa.md}): each segment is one parameter, decoded on its own. Every other ambiguity, and bytes
     * that are not UTF-8, stay refused by Jetty.
     */
    private static final UriCompliance URI_COMPLIANCE = UriCompliance.DEFAULT.with(
            "engram",
            UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
            UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING);

    /**
     * A request as a handler sees it: path parameters and query parameters decoded, the body read (bounded), the key's
     * holder and the key as presented (both null when authentication is disabled or no key was sent).
     */
    public record Request(
            String method,
            Map<String, String> path,
            Map<String, List<String>> parameters,
            byte[] body,
            ApiKeys.Key caller,
            String presentedKey) {

        public String namespace() {
            return path.get("ns");
        }

        /**
         * A query parameter, decoded, or null when absent; a 400 when it is given more than once (every parameter of
         * the API has one value: which of two would count is not for the server to guess).
         */
        String query(String name) {
            List<String> values = parameters.getOrDefault(name, List.of());
            if (values.size() > 1) {
                throw ApiException.badRequest("parameter '" + abbreviate(name) + "' is given more than once");
            }
            return values.isEmpty() ? null : values.get(0);
        }
    }

    /** What a handler answers: a status and a JSON body, or text. */
    public record Reply(int status, String contentType, Object body) {
        public static Reply json(int status, Object body) {
            return new Reply(status, "application/json", body);
        }

        public static Reply ok(Object body) {
            return json(200, body);
        }

        public static Reply text(String contentType, String body) {
            return new Reply(200, contentType, body);
        }
    }

    /** One endpoint's logic. */
    @FunctionalInterface
    public interface Handler {
        Reply handle(Request request);
    }

    /**
     * One endpoint: method and path template ({@code {name}} matches one path segment); a route under
     * {@code /v1/namespaces/{ns}} is answered by the instance that owns the namespace. {@code role} is what a key needs
     * (null: no key, for health checks). {@code precheck} runs before routing, for what any instance can refuse at
     * once.
     */
    public record Route(
            String method,
            String template,
            ApiKeys.Role role,
            boolean namespaced,
            Handler precheck,
            Handler handler,
            int maxBodyBytes,
            boolean takesSlot) {

        /** A route whose requests count against the in-flight limit when they need a key (health checks never do). */
        public Route(
                String method,
                String template,
                ApiKeys.Role role,
                boolean namespaced,
                Handler precheck,
                Handler handler) {
            this(method, template, role, namespaced, precheck, handler, MAX_BODY_BYTES, role != null);
        }
    }

    /** The query parameters of each route, from the OpenAPI document. */
    private static final QueryParameters QUERY_PARAMETERS = new QueryParameters(Routes.OPENAPI);

    private final Javalin app;
    private final MemoryAccess memory;
    private final ApiKeys keys;
    private final Origins origins;
    private final RequestSlots inFlight;
    private final Semaphore bodyBytes = new Semaphore(BODY_BUDGET_BYTES);
    private final Meters meters;
    private volatile Duration idleTimeout = IDLE_TIMEOUT;

    /**
     * @param keys the API keys requests must carry, or null to serve without authentication
     * @param origins the web pages whose requests may change something (see {@link Origins})
     * @param maxInFlight requests served at once; more are refused with 429 (health checks are always answered)
     * @param maxInFlightPerNamespace of those, requests of one namespace at once; more are refused with 429
     */
    public HttpApi(
            InetSocketAddress bind,
            List<Route> table,
            NamespaceRouter router,
            ApiKeys keys,
            Origins origins,
            int maxInFlight,
            int maxInFlightPerNamespace,
            Meters meters) {
        this(
                bind,
                new MemoryAccess(table, router),
                Map.of(),
                keys,
                origins,
                maxInFlight,
                maxInFlightPerNamespace,
                meters);
    }

    /**
     * @param memory the route table and what answers it (closed with the server)
     * @param mounts servlets that answer a route of the table in its handler's stead (the MCP transport), behind the
     *     same checks: the route's role, body limit and slot
     */
    public HttpApi(
            InetSocketAddress bind,
            MemoryAccess memory,
            Map<String, HttpServlet> mounts,
            ApiKeys keys,
            Origins origins,
            int maxInFlight,
            int maxInFlightPerNamespace,
            Meters meters) {
        this.memory = memory;
        this.keys = keys;
        this.origins = origins;
        this.inFlight = new RequestSlots(maxInFlight, maxInFlightPerNamespace);
        this.meters = meters;
        this.app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.host = bind.getHostString();
            config.jetty.port = bind.getPort();
            config.concurrency.useVirtualThreads = true;
            config.http.prefer405over404 = true;
            // replies are compact JSON, mostly small; a proxy in front compresses what crosses a slow network
            config.http.compressionStrategy = CompressionStrategy.NONE;
            config.router.ignoreTrailingSlashes = false;
            config.jetty.modifyHttpConfiguration(http -> {
                http.setSendServerVersion(false);
                http.setSendXPoweredBy(false);
                http.setUriCompliance(URI_COMPLIANCE);
            });
            config.jetty.modifyServer(server -> {
                server.addBean(new ConnectionLimit(MAX_CONNECTIONS, server));
                server.setErrorHandler(new JsonErrors());
            });
            config.jetty.modifyServletContextHandler(context -> context.setErrorHandler(new JsonErrors()));
            for (Route route : memory.table()) {
                HttpServlet servlet = mounts.get(route.template());
                config.routes.addHttpHandler(
                        HandlerType.findOrCreate(route.method()),
                        route.template(),
                        ctx -> dispatch(ctx, route, servlet));
                if (route.method().equals("GET")) {
                    // HEAD is GET without the body (health checks of load balancers send it)
                    config.routes.addHttpHandler(
                            HandlerType.HEAD, route.template(), ctx -> dispatch(ctx, route, servlet));
                }
            }
            // what matches no route, or no method of its path: the same JSON errors as everything else
            config.routes.exception(HttpResponseException.class, (e, ctx) -> {
                if (e.getStatus() == 405) {
                    List<String> methods = new ArrayList<>();
                    for (String m :
                            e.getDetails().getOrDefault("availableMethods", "").split(",")) {
                        if (!m.isBlank()) {
                            methods.add(m.strip());
                        }
                    }
                    String allowed = String.join(", ", methods);
                    ctx.header("Allow", allowed);
                    sendError(ctx, ApiException.methodNotAllowed(allowed));
                } else if (e.getStatus() == 404) {
                    sendError(
                            ctx,
                            ApiException.notFound(
                                    "no route for " + abbreviate(ctx.req().getRequestURI())));
                } else {
                    sendError(ctx, new ApiException(e.getStatus(), "bad_request", e.getMessage()));
                }
                meters.httpRequest("unknown", methodTag(ctx.req().getMethod()), e.getStatus(), Duration.ZERO);
            });
        });
        app.start();
        idleTimeout(IDLE_TIMEOUT);
    }

    /**
     * How long a connection may send nothing, its request's body included, before it is closed (a stalled body gets a
     * 408); a handler still answering is not cut off. {@link #IDLE_TIMEOUT} unless a test shortens it.
     */
    void idleTimeout(Duration timeout) {
        idleTimeout = timeout;
        for (var c : app.jettyServer().server().getConnectors()) {
            if (c instanceof ServerConnector connector) {
                connector.setIdleTimeout(timeout.toMillis());
            }
        }
    }

    public int port() {
        return app.port();
    }

    /** Serves one request of {@code route}: through {@code servlet} when given (a mount), else the route's handler. */
    private void dispatch(Context ctx, Route route, HttpServlet servlet) {
        long t0 = System.nanoTime();
        String method = ctx.req().getMethod();
        int status;
        int[] held = {0}; // bytes of the body budget this request holds
        try {
            Map<String, String> params =
                    pathParameters(route.template(), ctx.req().getRequestURI());
            String host = ctx.header("Host");
            if (keys == null && route.role() != null && !origins.allowsHost(host)) {
                throw new ApiException(
                        403,
                        "forbidden_host",
                        "this instance has no API keys and answers only to its own names, not to '"
                                + abbreviate(String.valueOf(host))
                                + "': add that name to ENGRAM_HTTP_ALLOWED_HOSTS, or require API keys");
            }
            if (changes(route)) {
                String origin = ctx.header("Origin");
                if (!origins.allows(origin, host, ctx.header("X-Forwarded-Host"), keys != null)) {
                    throw new ApiException(
                            403,
                            "forbidden_origin",
                            "requests from pages of origin '" + origin + "' are not accepted (see"
                                    + " ENGRAM_HTTP_ALLOWED_ORIGINS)");
                }
            }
            String presented = presentedKey(ctx);
            ApiKeys.Key caller = authorize(ctx, route, params.get("ns"), presented);
            Map<String, List<String>> query = parameters(ctx.req().getQueryString());
            if (servlet == null) {
                QUERY_PARAMETERS.check(method, route.template(), query); // a mount's protocol has its own
            }
            Request request =
                    new Request(method, params, query, readBody(ctx, route.maxBodyBytes(), held), caller, presented);
            String tenant = params.get("ns");
            if (route.takesSlot()) {
                inFlight.take(tenant);
            }
            try {
                status = servlet != null ? mount(ctx, servlet, request) : serve(ctx, route, request);
            } finally {
                if (route.takesSlot()) {
                    inFlight.release(tenant);
                }
            }
        } catch (RuntimeException e) {
            ApiException error = ApiException.of(e);
            if (error.status() == 500) {
                LOG.warn("request {} {} failed", method, ctx.req().getRequestURI(), e);
            }
            status = error.status();
            sendError(ctx, error);
        } finally {
            bodyBytes.release(held[0]);
        }
        meters.httpRequest(route.template(), methodTag(method), status, Duration.ofNanos(System.nanoTime() - t0));
    }

    /**
     * The values of a template's {@code {name}} segments in a request's path, each percent-decoded on its own ({@code
     * %2F} is part of a value, {@code +} is a plus). Jetty has already refused paths whose escapes are not UTF-8.
     */
    static Map<String, String> pathParameters(String template, String rawPath) {
        String[] names = template.split("/", -1);
        String[] values = rawPath.split("/", -1);
        Map<String, String> params = new LinkedHashMap<>();
        for (int i = 0; i < names.length && i < values.length; i++) {
            if (names[i].startsWith("{") && names[i].endsWith("}")) {
                params.put(names[i].substring(1, names[i].length() - 1), decode(values[i]));
            }
        }
        return params;
    }

    /** A path segment, percent-decoded: {@code +} is a plus; an escape that is not two hex digits is a 400. */
    static String decode(String segment) {
        if (segment.indexOf(';') >= 0) {
            // Jetty would read it as a path parameter and drop the rest of the segment: "a;b" would name "a"
            throw ApiException.badRequest(
                    "a path segment holds no unescaped ';' (send it as %3B): '" + abbreviate(segment) + "'");
        }
        try {
            return URIUtil.decodePath(segment);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("bad percent-encoding in '" + abbreviate(segment) + "'");
        }
    }

    /**
     * The query's parameters, decoded as forms are ({@code +} a space, {@code %2B} a plus), strictly: escapes that are
     * not two hex digits or bytes that are not UTF-8 are a 400, never replaced.
     */
    static Map<String, List<String>> parameters(String rawQuery) {
        Map<String, List<String>> params = new LinkedHashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return params;
        }
        try {
            UrlEncoded.decodeUtf8To(
                    rawQuery, 0, rawQuery.length(), (k, v) -> params.computeIfAbsent(k, x -> new ArrayList<>())
                            .add(v));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("the query is not percent-encoded UTF-8: '" + abbreviate(rawQuery) + "'");
        }
        return params;
    }

    /**
     * The key of a request that may use this route: 401 without a valid key, 403 when its role or namespaces do not
     * reach (see {@link MemoryAccess#authorize}).
     */
    private ApiKeys.Key authorize(Context ctx, Route route, String namespace, String presented) {
        if (keys == null || route.role() == null) {
            return null;
        }
        ApiKeys.Key key = keys.authenticate(presented).orElse(null);
        if (key == null) {
            ctx.header("WWW-Authenticate", "Bearer");
            throw new ApiException(401, "unauthorized", "an API key is required (Authorization: Bearer <key>)");
        }
        MemoryAccess.authorize(route, key, namespace);
        return key;
    }

    /** {@code Authorization: Bearer <key>} or {@code X-API-Key: <key>}. */
    static String presentedKey(Context ctx) {
        String authorization = ctx.header("Authorization");
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return authorization.substring(7).strip();
        }
        return ctx.header("X-API-Key");
    }

    /** Whether a route changes memory or calls tools: one a write or admin key is needed for, and MCP. */
    private static boolean changes(Route route) {
        return !route.method().equals("GET")
                && (route.role() == ApiKeys.Role.WRITE
                        || route.role() == ApiKeys.Role.ADMIN
                        || route.template().equals("/mcp"));
    }

    /** Methods are metric tags: any other than the standard ones counts as OTHER, so no request adds a series. */
    static String methodTag(String method) {
        return STANDARD_METHODS.contains(method) ? method : "OTHER";
    }

    private int serve(Context ctx, Route route, Request request) {
        MemoryAccess.Answer answer = memory.serve(route, request, ctx.header(FORWARDED_HEADER) != null);
        if (answer.retryAfter() != null) {
            ctx.header("Retry-After", answer.retryAfter());
        }
        send(ctx, answer.status(), answer.contentType(), answer.body());
        return answer.status();
    }

    /** Hands a request whose checks passed to a mounted servlet, with the body already read. */
    private int mount(Context ctx, HttpServlet servlet, Request request) {
        // the servlet's tool calls take a slot of their own namespace each (see MemoryAccess#call)
        ctx.req()
                .setAttribute(
                        McpEndpoint.CALLER,
                        new MemoryAccess.Caller(request.caller(), request.presentedKey(), inFlight));
        securityHeaders(ctx.res()::setHeader);
        try {
            servlet.service(new ReadRequest(ctx.req(), request.body()), ctx.res());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ServletException e) {
            throw new IllegalStateException(e);
        }
        ctx.skipRemainingHandlers();
        return ctx.res().getStatus();
    }

    /**
     * Reads a request's body, at most {@code maxBytes} (else a 413), taking its bytes from the body budget as they
     * arrive ({@code held} counts them; the caller gives them back once the request is answered): a 429 when the bodies
     * being read and served already hold the whole budget.
     */
    private byte[] readBody(Context ctx, int maxBytes, int[] held) {
        try (InputStream in = ctx.req().getInputStream()) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            for (int n; (n = in.read(chunk)) > 0; ) {
                if (body.size() + n > maxBytes) {
                    throw ApiException.tooLarge("request body is larger than " + maxBytes + " bytes");
                }
                if (body.size() + n > BODY_BUDGET_BYTES) {
                    // never a 429 that a retry cannot help: a body larger than all bodies together may be
                    throw ApiException.tooLarge("request body is larger than the " + BODY_BUDGET_BYTES
                            + " bytes this instance holds at once");
                }
                if (!bodyBytes.tryAcquire(n)) {
                    throw new ApiException(
                            429, "too_many_requests", "this instance holds as many request bodies as it may", 1);
                }
                held[0] += n;
                body.write(chunk, 0, n);
            }
            return body.toByteArray();
        } catch (IOException e) {
            if (e.getCause() instanceof TimeoutException) {
                throw new ApiException(
                        408,
                        "request_timeout",
                        "the request body stopped arriving for " + idleTimeout.toMillis() + " ms");
            }
            throw ApiException.badRequest("the request body could not be read: " + e.getMessage());
        }
    }

    static String abbreviate(String s) {
        return Utf8.abbreviate(s, 200, "...");
    }

    private static void sendError(Context ctx, ApiException e) {
        if (ctx.res().isCommitted()) {
            // the answer was on its way (a client that went away while it was written): nothing more can be said
            LOG.debug("an error after the response was committed: {}", e.getMessage());
            return;
        }
        if (e.retryAfterSeconds() != null) {
            ctx.header("Retry-After", Integer.toString(e.retryAfterSeconds()));
        }
        MemoryAccess.Answer answer = MemoryAccess.json(e.status(), errorBody(e.code(), e.getMessage()));
        send(ctx, answer.status(), answer.contentType(), answer.body());
    }

    public static Map<String, Object> errorBody(String code, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        return Map.of("error", error);
    }

    private static void send(Context ctx, int status, String contentType, byte[] bytes) {
        ctx.status(status);
        ctx.contentType(contentType);
        securityHeaders(ctx.res()::setHeader);
        ctx.result(bytes);
    }

    /** No answer is read as another type, and none is shown in another site's frame (the explorer's buttons). */
    private static void securityHeaders(BiConsumer<String, String> set) {
        set.accept("X-Content-Type-Options", "nosniff");
        set.accept("X-Frame-Options", "DENY");
        set.accept("Content-Security-Policy", "frame-ancestors 'none'");
    }

    /**
     * Jetty's own refusals (a malformed request line, a second {@code Host}, none in HTTP/1.1, an ambiguous or non-UTF-8
     * path) in the API's JSON error shape.
     */
    private static final class JsonErrors extends ErrorHandler {
        @Override
        protected void generateResponse(
                org.eclipse.jetty.server.Request request,
                Response response,
                int code,
                String message,
                Throwable cause,
                Callback callback) {
            String reason = code >= 500
                    ? "internal error"
                    : message != null ? message : cause != null ? cause.getMessage() : null;
            String name = code == 404 ? "not_found" : code >= 500 ? "internal" : "bad_request";
            byte[] bytes = Json.toBytes(errorBody(name, reason == null ? "HTTP " + code : reason));
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            securityHeaders(response.getHeaders()::put);
            response.write(true, ByteBuffer.wrap(bytes), callback);
        }
    }

    @Override
    public void close() {
        app.stop();
        memory.close();
    }
}
