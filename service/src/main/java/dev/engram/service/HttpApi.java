package dev.engram.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.schemas.Utf8;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP server of one instance: matches a request against the {@link Routes route table}, answers namespace
 * routes locally when this instance owns the namespace and forwards them to the owner otherwise (so any instance
 * answers any namespace), and turns every failure into a JSON error in one place ({@link ApiException#of}).
 */
final class HttpApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    static final String FORWARDED_HEADER = "X-Engram-Forwarded";
    static final int MAX_BODY_BYTES = 64 * 1024;
    private static final Duration REQUEST_READ_TIMEOUT = Duration.ofSeconds(30);
    /** The longest a request may take, answering included: an LLM answer with retries fits, a stuck client not. */
    private static final Duration RESPONSE_TIMEOUT = Duration.ofMinutes(10);
    /**
     * Open connections at most: the JDK server closes the ones past it as they come (health checks included), which
     * bounds the threads and file descriptors clients can hold; a proxy in front limits them per client.
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

    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    /**
     * A request as a handler sees it: path parameters decoded, the body read (bounded), the key's holder and the key as
     * presented (both null when authentication is disabled or no key was sent).
     */
    record Request(
            String method, URI uri, Map<String, String> path, byte[] body, ApiKeys.Key caller, String presentedKey) {

        String namespace() {
            return path.get("ns");
        }

        /**
         * A query parameter, decoded, or null when absent; a 400 when it is given more than once (every parameter of
         * the API has one value: which of two would count is not for the server to guess).
         */
        String query(String name) {
            String raw = uri.getRawQuery();
            if (raw == null) {
                return null;
            }
            String found = null;
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                String k = decodeQuery(eq < 0 ? pair : pair.substring(0, eq));
                if (k.equals(name)) {
                    if (found != null) {
                        throw ApiException.badRequest("parameter '" + abbreviate(name) + "' is given more than once");
                    }
                    found = eq < 0 ? "" : decodeQuery(pair.substring(eq + 1));
                }
            }
            return found;
        }
    }

    /** What a handler answers: a status and a JSON body, or text. */
    record Reply(int status, String contentType, Object body) {
        static Reply json(int status, Object body) {
            return new Reply(status, "application/json", body);
        }

        static Reply ok(Object body) {
            return json(200, body);
        }

        static Reply text(String contentType, String body) {
            return new Reply(200, contentType, body);
        }
    }

    /** One endpoint's logic. */
    @FunctionalInterface
    interface Handler {
        Reply handle(Request request);
    }

    /**
     * One endpoint: method and path template ({@code {name}} matches one path segment); a route under
     * {@code /v1/namespaces/{ns}} is answered by the instance that owns the namespace. {@code role} is what a key needs
     * (null: no key, for health checks). {@code precheck} runs before routing, for what any instance can refuse at
     * once.
     */
    record Route(
            String method,
            String template,
            ApiKeys.Role role,
            boolean namespaced,
            Handler precheck,
            Handler handler,
            int maxBodyBytes,
            boolean takesSlot) {

        /** A route whose requests count against the in-flight limit when they need a key (health checks never do). */
        Route(
                String method,
                String template,
                ApiKeys.Role role,
                boolean namespaced,
                Handler precheck,
                Handler handler) {
            this(method, template, role, namespaced, precheck, handler, MAX_BODY_BYTES, role != null);
        }

        Pattern pattern() {
            StringBuilder regex = new StringBuilder("^");
            Matcher m = Pattern.compile("\\{(\\w+)}|[^{]+").matcher(template);
            while (m.find()) {
                regex.append(m.group(1) != null ? "(?P<" + m.group(1) + ">[^/]+)" : Pattern.quote(m.group()));
            }
            return Pattern.compile(regex.append('$').toString());
        }
    }

    private record Compiled(Route route, Pattern pattern, List<String> names) {}

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient client = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .executor(executor)
            .build();
    private final List<Compiled> routes = new ArrayList<>();
    private final NamespaceRouter router;
    private final ApiKeys keys;
    private final Origins origins;
    private final RequestSlots inFlight;
    private final Semaphore bodyBytes = new Semaphore(BODY_BUDGET_BYTES);
    private final Meters meters;

    /**
     * @param keys the API keys requests must carry, or null to serve without authentication
     * @param origins the web pages whose requests may change something (see {@link Origins})
     * @param maxInFlight requests served at once; more are refused with 429 (health checks are always answered)
     * @param maxInFlightPerNamespace of those, requests of one namespace at once; more are refused with 429
     */
    HttpApi(
            InetSocketAddress bind,
            List<Route> table,
            NamespaceRouter router,
            ApiKeys keys,
            Origins origins,
            int maxInFlight,
            int maxInFlightPerNamespace,
            Meters meters)
            throws IOException {
        for (Route r : table) {
            List<String> names = new ArrayList<>();
            Matcher m = Pattern.compile("\\{(\\w+)}").matcher(r.template());
            while (m.find()) {
                names.add(m.group(1));
            }
            routes.add(new Compiled(r, r.pattern(), names));
        }
        this.router = router;
        this.keys = keys;
        this.origins = origins;
        this.inFlight = new RequestSlots(maxInFlight, maxInFlightPerNamespace);
        this.meters = meters;
        // Replies go out as headers then body: without TCP_NODELAY, Nagle's algorithm holds the body back until the
        // client's delayed ACK (tens of milliseconds on every request). The JDK server reads this once, at first use.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        // A client that sends its request or reads the reply too slowly is cut off instead of holding a connection.
        System.setProperty("sun.net.httpserver.maxReqTime", Long.toString(REQUEST_READ_TIMEOUT.toSeconds()));
        System.setProperty("sun.net.httpserver.maxRspTime", Long.toString(RESPONSE_TIMEOUT.toSeconds()));
        System.setProperty("jdk.httpserver.maxConnections", Integer.toString(MAX_CONNECTIONS));
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
        String routeName = "unknown";
        String method = exchange.getRequestMethod();
        int status;
        int[] held = {0}; // bytes of the body budget this request holds
        try (exchange) {
            try {
                // one Host, and one in every HTTP/1.1 request (RFC 9112, 3.2): a second one could name another host
                // than the one the checks below read
                List<String> hosts = exchange.getRequestHeaders().get("Host");
                if (hosts != null && hosts.size() > 1) {
                    throw ApiException.badRequest("a request has one Host header, not " + hosts.size());
                }
                if (hosts == null && "HTTP/1.1".equals(exchange.getProtocol())) {
                    throw ApiException.badRequest("an HTTP/1.1 request needs a Host header");
                }
                String path = exchange.getRequestURI().getRawPath();
                List<Compiled> matching = new ArrayList<>();
                Map<String, String> params = new LinkedHashMap<>();
                for (Compiled c : routes) {
                    Matcher m = c.pattern().matcher(path);
                    if (m.matches()) {
                        if (matching.isEmpty()) {
                            for (String name : c.names()) {
                                params.put(name, decode(m.group(name)));
                            }
                        }
                        matching.add(c);
                    }
                }
                if (matching.isEmpty()) {
                    throw ApiException.notFound("no route for " + path);
                }
                routeName = matching.get(0).route().template();
                Route route = matching.stream()
                        .map(Compiled::route)
                        // HEAD is GET without the body (health checks of load balancers send it)
                        .filter(r -> r.method().equals(method.equals("HEAD") ? "GET" : method))
                        .findFirst()
                        .orElseThrow(() -> {
                            List<String> methods = new ArrayList<>(matching.stream()
                                    .map(c -> c.route().method())
                                    .distinct()
                                    .toList());
                            if (methods.contains("GET")) {
                                methods.add("HEAD");
                            }
                            String allowed = String.join(", ", methods);
                            exchange.getResponseHeaders().set("Allow", allowed);
                            return ApiException.methodNotAllowed(allowed);
                        });
                String host = exchange.getRequestHeaders().getFirst("Host");
                if (keys == null && route.role() != null && !origins.allowsHost(host)) {
                    throw new ApiException(
                            403,
                            "forbidden_host",
                            "this instance has no API keys and answers only to its own names, not to '"
                                    + abbreviate(host)
                                    + "': add that name to ENGRAM_HTTP_ALLOWED_HOSTS, or require API keys");
                }
                if (changes(route)) {
                    String origin = exchange.getRequestHeaders().getFirst("Origin");
                    if (!origins.allows(
                            origin,
                            exchange.getRequestHeaders().getFirst("Host"),
                            exchange.getRequestHeaders().getFirst("X-Forwarded-Host"),
                            keys != null)) {
                        throw new ApiException(
                                403,
                                "forbidden_origin",
                                "requests from pages of origin '" + origin + "' are not accepted (see"
                                        + " ENGRAM_HTTP_ALLOWED_ORIGINS)");
                    }
                }
                ApiKeys.Key caller = authorize(exchange, route, params.get("ns"));
                Request request = new Request(
                        method,
                        exchange.getRequestURI(),
                        params,
                        readBody(exchange, route.maxBodyBytes(), held),
                        caller,
                        presentedKey(exchange));
                String tenant = params.get("ns");
                RequestSlots.Refusal refusal =
                        route.takesSlot() ? inFlight.tryAcquire(tenant) : RequestSlots.Refusal.NONE;
                if (refusal == RequestSlots.Refusal.INSTANCE) {
                    throw new ApiException(
                            429, "too_many_requests", "this instance is serving as many requests as it may", 1);
                }
                if (refusal == RequestSlots.Refusal.NAMESPACE) {
                    throw new ApiException(
                            429,
                            "too_many_requests",
                            "this instance is serving as many requests of namespace '" + abbreviate(tenant)
                                    + "' as one namespace may (" + inFlight.perNamespace()
                                    + "); other namespaces keep theirs",
                            1);
                }
                try {
                    status = serve(exchange, route, request);
                } finally {
                    if (route.takesSlot()) {
                        inFlight.release(tenant);
                    }
                }
            } catch (RuntimeException e) {
                ApiException error = ApiException.of(e);
                if (error.status() == 500) {
                    LOG.warn("request {} {} failed", method, exchange.getRequestURI(), e);
                }
                status = error.status();
                sendError(exchange, error);
            } finally {
                bodyBytes.release(held[0]);
            }
            meters.httpRequest(routeName, methodTag(method), status, Duration.ofNanos(System.nanoTime() - t0));
        }
    }

    /**
     * The key of a request that may use this route: 401 without a valid key, 403 when its role or namespaces do not
     * reach. Every hop checks, so a forwarded request is no way around it.
     */
    private ApiKeys.Key authorize(HttpExchange exchange, Route route, String namespace) {
        if (keys == null || route.role() == null) {
            return null;
        }
        ApiKeys.Key key = keys.authenticate(presentedKey(exchange)).orElse(null);
        if (key == null) {
            exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
            throw new ApiException(401, "unauthorized", "an API key is required (Authorization: Bearer <key>)");
        }
        if (!key.role().includes(route.role())) {
            throw new ApiException(
                    403, "forbidden", "this key's role cannot " + route.method() + " " + route.template());
        }
        if (route.namespaced() && !key.allows(namespace)) {
            throw new ApiException(403, "forbidden", "this key has no access to namespace '" + namespace + "'");
        }
        return key;
    }

    /** {@code Authorization: Bearer <key>} or {@code X-API-Key: <key>}. */
    static String presentedKey(HttpExchange exchange) {
        String authorization = exchange.getRequestHeaders().getFirst("Authorization");
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return authorization.substring(7).strip();
        }
        return exchange.getRequestHeaders().getFirst("X-API-Key");
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

    private int serve(HttpExchange exchange, Route route, Request request) throws IOException {
        if (route.namespaced()) {
            String ns = request.namespace();
            if (!NAMESPACE.matcher(ns).matches()) {
                throw ApiException.badRequest("namespace must match " + NAMESPACE.pattern());
            }
            if (route.precheck() != null) {
                route.precheck().handle(request);
            }
            if (router.ownerOf(ns) instanceof NamespaceRouter.Remote remote) {
                if (exchange.getRequestHeaders().containsKey(FORWARDED_HEADER)) {
                    throw ApiException.unavailable("namespace '" + ns + "' moved while the request was forwarded");
                }
                return forward(exchange, remote.host(), request);
            }
        }
        Reply reply = route.handler().handle(request);
        if (!(reply.body() instanceof String text)) {
            ObjectNode body = Json.mapper().valueToTree(reply.body());
            if (route.namespaced()) {
                body.put("served_by", router.self().host() + ":" + router.self().port());
            }
            return sendJson(exchange, reply.status(), body);
        }
        send(exchange, reply.status(), reply.contentType(), text.getBytes(StandardCharsets.UTF_8));
        return reply.status();
    }

    private int forward(HttpExchange exchange, HostInfo host, Request request) throws IOException {
        URI uri = request.uri();
        String key = presentedKey(exchange);
        URI target = URI.create("http://" + host.host() + ":" + host.port() + wire(uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + wire(uri.getRawQuery())));
        HttpRequest forwarded = HttpRequest.newBuilder(target)
                .timeout(RESPONSE_TIMEOUT)
                .header(
                        FORWARDED_HEADER,
                        router.self().host() + ":" + router.self().port())
                .header("Content-Type", "application/json")
                .method(
                        request.method(),
                        request.body().length == 0
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(request.body()))
                .build();
        if (key != null) {
            // the owner checks the key again: forwarding grants nothing
            forwarded = HttpRequest.newBuilder(forwarded, (name, value) -> true)
                    .header("Authorization", "Bearer " + key)
                    .build();
        }
        HttpResponse<byte[]> response;
        try {
            response = client.send(forwarded, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            LOG.warn("forwarding {} to {}:{} failed: {}", uri.getRawPath(), host.host(), host.port(), e.toString());
            throw ApiException.unavailable("the instance that owns the namespace is unreachable; retry shortly");
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

    /**
     * Reads a request's body, at most {@code maxBytes} (else a 413), taking its bytes from the body budget as they
     * arrive ({@code held} counts them; the caller gives them back once the request is answered): a 429 when the bodies
     * being read and served already hold the whole budget.
     */
    private byte[] readBody(HttpExchange exchange, int maxBytes, int[] held) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
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
        }
    }

    /**
     * A raw path or query as sent on, with the bytes a client sent unescaped (read as ISO-8859-1 characters, see {@link
     * #percentDecode}) escaped, so that the next instance reads the same bytes.
     */
    static String wire(String raw) {
        StringBuilder out = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c >= 0x80 && c <= 0xff) {
                out.append('%')
                        .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * A query parameter's name or value, form-encoded: {@code +} is a space (as browsers' {@code URLSearchParams},
     * curl's {@code --data-urlencode} and most HTTP clients send it), {@code %2B} a plus.
     */
    static String decodeQuery(String s) {
        return percentDecode(s, true);
    }

    /** A path segment: {@code +} is a plus. */
    static String decode(String s) {
        return percentDecode(s, false);
    }

    /**
     * Percent-decodes {@code s} as UTF-8, strictly: an escape that is not two hex digits, or bytes that are not UTF-8
     * (overlong forms, surrogates, stray continuation bytes) are a 400, never replaced by U+FFFD, so that two
     * different requests can never name the same id.
     */
    private static String percentDecode(String s, boolean plusIsSpace) {
        if (s.indexOf('%') < 0 && s.chars().allMatch(c -> c < 0x80)) {
            return plusIsSpace ? s.replace('+', ' ') : s;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); ) {
            char c = s.charAt(i);
            if (c == '%') {
                int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
                int lo = hi >= 0 ? Character.digit(s.charAt(i + 2), 16) : -1;
                if (lo < 0) {
                    throw ApiException.badRequest("bad percent-encoding in '" + abbreviate(s) + "'");
                }
                bytes.write(hi << 4 | lo);
                i += 3;
                continue;
            }
            if (c >= 0x80 && c <= 0xff) {
                // a byte sent as it is, not percent-encoded: the server reads a request line byte by byte (ISO-8859-1),
                // so these are the bytes the client sent, UTF-8 or not, and are decoded as the escaped ones are
                bytes.write(c);
                i++;
                continue;
            }
            int cp = s.codePointAt(i);
            byte[] raw = (plusIsSpace && cp == '+' ? " " : new String(Character.toChars(cp)))
                    .getBytes(StandardCharsets.UTF_8);
            bytes.write(raw, 0, raw.length);
            i += Character.charCount(cp);
        }
        return Utf8.decode(bytes.toByteArray())
                .orElseThrow(() ->
                        ApiException.badRequest("percent-encoded bytes that are not UTF-8 in '" + abbreviate(s) + "'"));
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 197) + "...";
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

    /**
     * Sends {@code body} as compact JSON (no indentation: a document's deeply nested metadata would otherwise come back
     * many times its size, and an MCP client would pay for the spaces in its model's context); returns the status sent
     * (500 when the body cannot be written).
     */
    private static int sendJson(HttpExchange exchange, int status, Object body) throws IOException {
        byte[] bytes;
        try {
            bytes = Json.mapper().writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            // never a connection closed without an answer: what cannot be written is a 500 that says so
            LOG.warn(
                    "the response to {} {} cannot be written as JSON",
                    exchange.getRequestMethod(),
                    exchange.getRequestURI(),
                    e);
            status = 500;
            bytes = Json.toBytes(Map.of(
                    "error",
                    Map.of("code", "internal", "message", "internal error: the response cannot be written as JSON")));
        }
        send(exchange, status, "application/json", bytes);
        return status;
    }

    private static void send(HttpExchange exchange, int status, String contentType, byte[] bytes) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        // no answer is read as another type, and none is shown in another site's frame (the explorer's buttons)
        exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        exchange.getResponseHeaders().set("X-Frame-Options", "DENY");
        exchange.getResponseHeaders().set("Content-Security-Policy", "frame-ancestors 'none'");
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
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
