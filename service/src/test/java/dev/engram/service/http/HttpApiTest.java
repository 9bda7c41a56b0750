package dev.engram.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.query.GraphLoader;
import dev.engram.query.QueryException;
import dev.engram.query.QueryService;
import dev.engram.query.VectorSearch;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.Json;
import dev.engram.service.ItSupport;
import dev.engram.service.app.Consistency;
import dev.engram.service.app.Health;
import dev.engram.service.cluster.NamespaceRouter;
import dev.engram.topology.EngramTopology;
import dev.engram.topology.Topics;
import dev.engram.topology.Understanders;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP layer of an instance whose Kafka Streams has not started: nothing is owned yet. */
class HttpApiTest {

    @TempDir
    Path stateDir;

    private KafkaStreams streams;
    private HttpApi api;
    private String base;
    private HttpApi secured;
    private String securedBase;
    private final Meters meters = Meters.detached();

    @BeforeEach
    void start() throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "http-api-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        streams = new KafkaStreams(
                EngramTopology.build(
                        EngramTopology.Settings.of(new Topics("t."), 1024, 64),
                        Understanders.embedded(),
                        Meters.detached()),
                props);
        QueryService queries = new QueryService(
                QueryService.memoryOf(streams),
                Understanders.embedded().embedder(),
                query -> List.of(),
                new GraphLoader(GraphLoader.Settings.of(1000, 1000), new VectorSearch(50_000, 100), Meters.detached()),
                null,
                QueryService.Llm.none(),
                Meters.detached(),
                Clock.systemUTC());
        Health down = new Health("STARTING", false, true, false, "CREATED", "CREATED", 0, 0, "127.0.0.1:1", "x", "y");
        api = new HttpApi(
                new InetSocketAddress("127.0.0.1", 0),
                new Routes(queries, () -> down, () -> "# metrics\n", noMirrors()).table(),
                new NamespaceRouter(streams, new HostInfo("127.0.0.1", 1)),
                null,
                Origins.local("engram.example"),
                64,
                32,
                meters);
        base = "http://127.0.0.1:" + api.port();
        secured = new HttpApi(
                new InetSocketAddress("127.0.0.1", 0),
                new Routes(queries, () -> down, () -> METRICS, noMirrors()).table(),
                new NamespaceRouter(streams, new HostInfo("127.0.0.1", 1)),
                new ApiKeys(ApiKeys.parseInline("admin:*:root-key;read:ns:ns-reader;read:other:other-reader")),
                Origins.local("engram.example"),
                64,
                32,
                Meters.detached());
        securedBase = "http://127.0.0.1:" + secured.port();
    }

    @AfterEach
    void stop() {
        api.close();
        secured.close();
        streams.close();
    }

    private static final String METRICS = "# HELP engram_llm_tokens_total LLM tokens\n"
            + "engram_llm_tokens_total{kind=\"prompt\",namespace=\"ns\"} 10.0\n"
            + "engram_llm_tokens_total{kind=\"prompt\",namespace=\"secret-project\"} 99.0\n"
            + "engram_documents_total{outcome=\"upserted\"} 3.0\n";

    private static ItSupport.Response with(String key, HttpRequest.Builder request) {
        return ItSupport.call(key == null ? request : request.header("Authorization", "Bearer " + key));
    }

    private ItSupport.Response get(String key, String path) {
        return with(key, HttpRequest.newBuilder(URI.create(securedBase + path)).GET());
    }

    private static Consistency noMirrors() {
        return new Consistency(ns -> null, null, null, null, "c", Meters.detached(), Clock.systemUTC(), null);
    }

    /**
     * The OpenAPI document and the route table describe the same API: every route is documented with its method,
     * every documented operation reaches a route (no 404 "no route", no 405), every path parameter is declared, every
     * reference resolves, the modes are the modes there are, and exactly the routes without a role are public.
     */
    @Test
    void theOpenApiDocumentDescribesExactlyTheRoutesThatAnswer() throws Exception {
        ItSupport.Response served = ItSupport.get(base + "/openapi.json");
        assertThat(served.status()).isEqualTo(200);
        assertThat(served.raw().headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
        JsonNode doc = served.body();
        assertThat(doc.path("openapi").asText()).isEqualTo("3.1.0");

        List<HttpApi.Route> table = new Routes(null, null, null, null).table();
        Set<String> routes = new TreeSet<>();
        Map<String, HttpApi.Route> byOperation = new HashMap<>();
        for (HttpApi.Route r : table) {
            routes.add(r.method() + " " + r.template());
            byOperation.put(r.method() + " " + r.template(), r);
        }
        Set<String> documented = new TreeSet<>();
        for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
            for (Map.Entry<String, JsonNode> op : path.getValue().properties()) {
                String operation = op.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey();
                documented.add(operation);
                JsonNode o = op.getValue();
                // every {name} in the path is a declared path parameter
                Set<String> declared = new TreeSet<>();
                for (JsonNode parameter : o.path("parameters")) {
                    JsonNode resolved = resolve(doc, parameter);
                    if (resolved.path("in").asText().equals("path")) {
                        declared.add(resolved.path("name").asText());
                    }
                }
                Set<String> inPath = new TreeSet<>();
                Matcher m = Pattern.compile("\\{(\\w+)}").matcher(path.getKey());
                while (m.find()) {
                    inPath.add(m.group(1));
                }
                assertThat(declared).as(operation).isEqualTo(inPath);
                HttpApi.Route route = byOperation.get(operation);
                if (route != null) {
                    assertThat(o.path("security").isArray()
                                    && o.path("security").isEmpty())
                            .as("%s is public exactly when it needs no key", operation)
                            .isEqualTo(route.role() == null);
                }
                // the operation reaches its route: anything but "no route" and "wrong method"
                String url = base
                        + path.getKey()
                                .replace("{ns}", "ns")
                                .replace("{id}", "0123456789abcdef0123456789abcdef")
                                .replace("{file}", "app.js");
                HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url));
                request = op.getKey().equals("get")
                        ? request.GET()
                        : request.header("Content-Type", "application/json")
                                .method(
                                        op.getKey().toUpperCase(Locale.ROOT),
                                        HttpRequest.BodyPublishers.ofString("{}"));
                ItSupport.Response r = ItSupport.call(request);
                assertThat(r.status()).as(operation).isNotEqualTo(405);
                assertThat(r.status() == 404
                                && r.body()
                                        .path("error")
                                        .path("message")
                                        .asText()
                                        .startsWith("no route"))
                        .as(operation)
                        .isFalse();
            }
        }
        assertThat(documented).isEqualTo(routes);
        // every reference resolves
        List<JsonNode> refs = doc.findValues("$ref");
        assertThat(refs).isNotEmpty();
        refs.forEach(
                ref -> assertThat(target(doc, ref.asText())).as(ref.asText()).isNotNull());
        JsonNode modes = doc.at("/components/schemas/RetrieveRequest/properties/mode/enum");
        Set<String> documentedModes = new TreeSet<>();
        modes.forEach(x -> documentedModes.add(x.asText()));
        assertThat(documentedModes).isEqualTo(new TreeSet<>(Retrieval.modes()));
    }

    private static JsonNode resolve(JsonNode doc, JsonNode node) {
        return node.has("$ref") ? target(doc, node.path("$ref").asText()) : node;
    }

    /** The node a local reference ({@code #/components/...}) points at, null when there is none. */
    private static JsonNode target(JsonNode doc, String ref) {
        assertThat(ref).startsWith("#/");
        JsonNode target = doc.at(ref.substring(1));
        return target.isMissingNode() ? null : target;
    }

    @Test
    void withoutAValidKeyEveryRouteButHealthIs401() {
        for (String path : List.of("/v1/namespaces/ns", "/v1/namespaces/ns/reviews", "/metrics")) {
            ItSupport.Response r = get(null, path);
            assertThat(r.status()).as(path).isEqualTo(401);
            assertThat(r.raw().headers().firstValue("WWW-Authenticate")).contains("Bearer");
            assertThat(r.body().path("error").path("code").asText()).isEqualTo("unauthorized");
            assertThat(get("not-a-key", path).status()).as(path).isEqualTo(401);
            assertThat(get("ns-reader ", path).status()).as(path).isIn(200, 503); // trimmed like a header value
        }
        assertThat(with(
                                "x",
                                HttpRequest.newBuilder(URI.create(securedBase + "/v1/namespaces/ns"))
                                        .header("X-API-Key", "ns-reader")
                                        .GET())
                        .status())
                .isEqualTo(401); // a wrong bearer key is not rescued by another header
        assertThat(ItSupport.call(HttpRequest.newBuilder(URI.create(securedBase + "/v1/namespaces/ns"))
                                .header("X-API-Key", "ns-reader")
                                .GET())
                        .status())
                .isEqualTo(503);
        assertThat(get(null, "/v1/health/live").status()).isEqualTo(200);
    }

    @Test
    void aKeyReachesOnlyItsNamespacesWithItsRole() {
        assertThat(get("other-reader", "/v1/namespaces/ns").status()).isEqualTo(403);
        assertThat(get("other-reader", "/v1/namespaces/ns/documents/d").status())
                .isEqualTo(403);
        // past authorization, the (not yet running) instance answers 503
        assertThat(get("ns-reader", "/v1/namespaces/ns").status()).isEqualTo(503);
        assertThat(get("root-key", "/v1/namespaces/anything").status()).isEqualTo(503);
        String command = "{\"op\": \"split\", \"entity_id\": \"" + "a".repeat(32) + "\", \"other_id\": \""
                + "b".repeat(32) + "\"}";
        ItSupport.Response merge = with(
                "ns-reader",
                HttpRequest.newBuilder(URI.create(securedBase + "/v1/namespaces/ns/merges"))
                        .POST(HttpRequest.BodyPublishers.ofString(command)));
        assertThat(merge.status()).isEqualTo(403);
        assertThat(merge.body().path("error").path("code").asText()).isEqualTo("forbidden");
    }

    @Test
    void aTenantsMetricsLeaveOutOtherNamespaces() {
        String tenant = get("ns-reader", "/metrics").raw().body();
        String admin = get("root-key", "/metrics").raw().body();

        assertThat(tenant)
                .contains("namespace=\"ns\"")
                .doesNotContain("secret-project")
                .as("instance-wide totals would show other tenants' activity")
                .doesNotContain("engram_documents_total");
        assertThat(admin)
                .contains("secret-project")
                .contains("namespace=\"ns\"")
                .contains("engram_documents_total");
    }

    @Test
    void namespaceRoutesAnswer503WithRetryAfterUntilTheInstanceRuns() {
        ItSupport.Response r = ItSupport.post(base + "/v1/namespaces/ns/retrieve", "{\"query\": \"x\"}");

        assertThat(r.status()).isEqualTo(503);
        assertThat(r.raw().headers().firstValue("Retry-After")).contains("1");
        assertThat(r.body().path("error").path("code").asText()).isEqualTo("unavailable");
        assertThat(r.body().path("error").path("message").asText()).contains("CREATED");
    }

    /**
     * A browser names the page a request comes from: pages of other sites may not write or call tools; reading,
     * including a search by POST, is not concerned.
     */
    @Test
    void writesFromPagesOfOtherSitesAre403() {
        Function<String, ItSupport.Response> writeFrom =
                origin -> ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/ns/documents/d"))
                        .header("Origin", origin)
                        .header("Content-Type", "text/plain;charset=UTF-8")
                        .PUT(HttpRequest.BodyPublishers.ofString("{\"text\": \"x\"}")));
        for (String evil : new String[] {"http://evil.example", "http://evil.example:8080", "null", "file://", "%%"}) {
            ItSupport.Response r = writeFrom.apply(evil);
            assertThat(r.status()).as(evil).isEqualTo(403);
            assertThat(r.body().path("error").path("code").asText()).isEqualTo("forbidden_origin");
        }
        for (String local : new String[] {"http://localhost:5173", "http://127.0.0.1:8080", "https://engram.example"}) {
            assertThat(writeFrom.apply(local).status()).as(local).isEqualTo(503); // past the check: not running
        }
        ItSupport.Response mcp = ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/mcp"))
                .header("Origin", "http://evil.example")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}")));
        assertThat(mcp.status()).as("tools can write").isEqualTo(403);
        ItSupport.Response search =
                ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/ns/retrieve"))
                        .header("Origin", "http://evil.example")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"query\": \"x\"}")));
        assertThat(search.status()).as("reading is not concerned").isEqualTo(503);
    }

    /**
     * DNS rebinding: a page of an attacker's domain that resolves to a key-less instance reads as its own origin, and
     * its requests name that domain in {@code Host}. A key-less instance answers only to its own names (health checks
     * whatever the name); with keys, the page has no key to present.
     */
    @Test
    void withoutKeysAnInstanceAnswersOnlyToItsOwnNames() throws IOException {
        String path = "/v1/namespaces/ns/documents/d";
        for (String evil :
                new String[] {"evil.example", "evil.example:8080", "localhost.evil.example", "engram.example.x"}) {
            String response = rawGet(api.port(), evil, path);
            assertThat(response).as(evil).startsWith("HTTP/1.1 403").contains("\"forbidden_host\"");
        }
        for (String own : new String[] {
            "localhost:8080",
            "127.0.0.1",
            "[::1]:8080",
            "10.1.2.3:80",
            "engram.example",
            "ENGRAM.example:9",
            "localhost."
        }) {
            assertThat(rawGet(api.port(), own, path)).as(own).startsWith("HTTP/1.1 503"); // past the check: not running
        }
        assertThat(rawGet(api.port(), "evil.example", "/v1/health")).startsWith("HTTP/1.1 503");
        assertThat(rawGet(secured.port(), "evil.example", path))
                .as("keys required")
                .startsWith("HTTP/1.1 401");
    }

    /** A GET sent over a socket, so that its {@code Host} header is the one given; the whole response. */
    private static String rawGet(int port, String host, String path) throws IOException {
        return rawGet(port, host, path.getBytes(StandardCharsets.US_ASCII));
    }

    /** A GET whose request target is the bytes given, as they are. */
    private static String rawGet(int port, String host, byte[] path) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write("GET ".getBytes(StandardCharsets.US_ASCII));
            out.write(path);
            out.write((" HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** A request as written, over a socket; the whole response. */
    private static String raw(int port, String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * A body that stops arriving is answered 408 once the connection is idle for the timeout, and the request slot it
     * held is given back (the instance has one); a handler that takes longer than the timeout to answer is not cut
     * off, since the connection is not idle while its request is being served.
     */
    @Test
    void aStalledBodyIsA408ButASlowHandlerIsAnswered() throws Exception {
        HttpApi.Route echo = new HttpApi.Route(
                "POST",
                "/echo",
                ApiKeys.Role.READ,
                false,
                null,
                r -> HttpApi.Reply.ok(Map.of("ok", true)),
                1 << 20,
                true);
        HttpApi.Route slow = new HttpApi.Route("GET", "/slow", ApiKeys.Role.READ, false, null, r -> {
            try {
                Thread.sleep(1_500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return HttpApi.Reply.ok(Map.of("ok", true));
        });
        try (HttpApi one = keyless(1, echo, slow)) {
            one.idleTimeout(Duration.ofMillis(500));
            String stalled = raw(
                    one.port(),
                    "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 100\r\nConnection: close\r\n\r\n{\"a\": 1,");
            assertThat(stalled).startsWith("HTTP/1.1 408").contains("\"request_timeout\"");

            assertThat(ItSupport.get("http://127.0.0.1:" + one.port() + "/slow").status())
                    .isEqualTo(200);
            // after the slow one, the slot is free again: a whole body is read and answered
            assertThat(raw(
                            one.port(),
                            "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                    + "Content-Length: 8\r\nConnection: close\r\n\r\n{\"a\": 1}"))
                    .startsWith("HTTP/1.1 200");
        }
    }

    /** A second Host header could name another host than the one the host check reads: refused, as is none in 1.1. */
    @Test
    void aRequestHasExactlyOneHostHeaderOrNoneInHttp10() throws Exception {
        String path = "/v1/namespaces/ns/documents/d";
        assertThat(raw(
                        api.port(),
                        "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n"
                                + "Connection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 400")
                .contains("Duplicate Host Header");
        assertThat(raw(api.port(), "GET " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 400")
                .contains("No Host");
        assertThat(raw(api.port(), "GET " + path + " HTTP/1.0\r\n\r\n"))
                .as("past the checks: not running")
                .startsWith("HTTP/1.1 503");
    }

    /**
     * A request target is ASCII (RFC 3986): bytes sent unescaped in a path, UTF-8 or not, are a JSON 400 — clients
     * percent-encode them, and the escaped form is read as UTF-8.
     */
    @Test
    void unescapedBytesInAPathAreRefused() throws Exception {
        byte[] prefix = "/v1/namespaces/ns/documents/".getBytes(StandardCharsets.US_ASCII);
        for (byte[] raw : List.of("café".getBytes(StandardCharsets.UTF_8), new byte[] {'r', 'a', 'w', (byte) 0xff})) {
            assertThat(rawGet(api.port(), "localhost", concat(prefix, raw)))
                    .startsWith("HTTP/1.1 400")
                    .contains("application/json")
                    .contains("\"bad_request\"");
        }
        assertThat(rawGet(api.port(), "localhost", "/v1/namespaces/ns/documents/caf%C3%A9"))
                .as("past the path's decoding: not running")
                .startsWith("HTTP/1.1 503");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void answeringWithoutAnLlmIsNotImplementedAndSaysHowToConfigureIt() {
        ItSupport.Response r = ItSupport.post(base + "/v1/namespaces/ns/answer", "{\"query\": \"x\"}");

        assertThat(r.status()).isEqualTo(501);
        assertThat(r.body().path("error").path("message").asText()).contains("ENGRAM_LLM_BASE_URL");
    }

    @Test
    void healthIs503WhileNotServingAndMetricsAreAlwaysThere() {
        assertThat(ItSupport.get(base + "/v1/health").status()).isEqualTo(503);
        assertThat(ItSupport.get(base + "/metrics").raw().body()).startsWith("# metrics");
    }

    @Test
    void rejectsHostileNamespacesBeforeRouting() {
        assertThat(ItSupport.get(base + "/v1/namespaces/" + "a".repeat(200)).status())
                .isEqualTo(400);
        assertThat(ItSupport.get(base + "/v1/namespaces/%2e%2e").status()).isEqualTo(400);
        ItSupport.Response wrongMethod = ItSupport.call(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).DELETE());
        assertThat(wrongMethod.status()).isEqualTo(405);
        assertThat(wrongMethod.raw().headers().firstValue("Allow")).contains("GET, HEAD");
    }

    @Test
    void headIsGetWithoutTheBody() {
        ItSupport.Response metrics = ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/metrics"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody()));
        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.raw().body()).isEmpty();
        assertThat(metrics.raw().headers().firstValue("Content-Type")).isPresent();
        assertThat(ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/v1/health"))
                                .method("HEAD", HttpRequest.BodyPublishers.noBody()))
                        .status())
                .as("not serving")
                .isEqualTo(503);
    }

    @Test
    void hostileMethodsAndPathsAddNoMetricSeries() {
        for (int i = 0; i < 5; i++) {
            ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/nowhere/" + i))
                    .method("BREW" + i, HttpRequest.BodyPublishers.noBody()));
            ItSupport.get(base + "/v1/namespaces/ns/unknown-" + i);
        }

        assertThat(meters.registry().find(Meters.HTTP_REQUESTS).timers())
                .allSatisfy(t -> {
                    assertThat(t.getId().getTag("route")).isIn("unknown", "/v1/namespaces/{ns}");
                    assertThat(t.getId().getTag("method")).isIn("GET", "OTHER");
                })
                .hasSizeLessThanOrEqualTo(3);
    }

    @Test
    void beyondItsInFlightLimitAnInstanceAnswers429ButStillAnswersHealthChecks() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        HttpApi.Route slow = new HttpApi.Route("GET", "/slow", ApiKeys.Role.READ, false, null, r -> {
            entered.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return HttpApi.Reply.ok(Map.of("done", true));
        });
        HttpApi.Route health = new HttpApi.Route(
                "GET", "/v1/health/live", null, false, null, r -> HttpApi.Reply.ok(Map.of("live", true)));
        try (HttpApi one = keyless(1, slow, health)) {
            String at = "http://127.0.0.1:" + one.port();
            CompletableFuture<ItSupport.Response> first =
                    CompletableFuture.supplyAsync(() -> ItSupport.get(at + "/slow"));
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

            ItSupport.Response second = ItSupport.get(at + "/slow");
            assertThat(second.status()).isEqualTo(429);
            assertThat(second.raw().headers().firstValue("Retry-After")).contains("1");
            assertThat(ItSupport.get(at + "/v1/health/live").status()).isEqualTo(200);

            release.countDown();
            assertThat(first.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
            // the permit comes back once the first exchange is done, which its client may see a moment before
            int status = 429;
            for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    status == 429 && System.nanoTime() < deadline; ) {
                status = ItSupport.get(at + "/slow").status();
                if (status == 429) {
                    TimeUnit.MILLISECONDS.sleep(10);
                }
            }
            assertThat(status).as("the permit came back").isEqualTo(200);
        }
    }

    /**
     * A namespace holds at most its share of the slots: a tenant that holds its share waiting (on an LLM, say) is
     * refused more, with a 429 that names its namespace, while another namespace is still served.
     */
    @Test
    void aNamespaceHoldsAtMostItsShareOfTheSlotsAndTheOthersKeepTheirs() throws Exception {
        CountDownLatch entered = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        HttpApi.Route slow = new HttpApi.Route("GET", "/v1/namespaces/{ns}/slow", ApiKeys.Role.READ, false, null, r -> {
            if (r.namespace().equals("flood")) {
                entered.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return HttpApi.Reply.ok(Map.of("ns", r.namespace()));
        });
        try (HttpApi one = keyless(4, 2, slow)) {
            String at = "http://127.0.0.1:" + one.port() + "/v1/namespaces/";
            List<CompletableFuture<ItSupport.Response>> flood = List.of(
                    CompletableFuture.supplyAsync(() -> ItSupport.get(at + "flood/slow")),
                    CompletableFuture.supplyAsync(() -> ItSupport.get(at + "flood/slow")));
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

            ItSupport.Response third = ItSupport.get(at + "flood/slow");
            assertThat(third.status()).isEqualTo(429);
            assertThat(third.body().path("error").path("message").asText()).contains("namespace 'flood'");
            assertThat(third.raw().headers().firstValue("Retry-After")).contains("1");
            ItSupport.Response quiet = ItSupport.get(at + "quiet/slow");
            assertThat(quiet.status()).isEqualTo(200);
            assertThat(quiet.body().path("ns").asText()).isEqualTo("quiet");

            release.countDown();
            for (CompletableFuture<ItSupport.Response> f : flood) {
                assertThat(f.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
        }
    }

    /**
     * Bodies are read before a request takes a slot: clients that send their headers and then stall in the body (a
     * slow-body attack) hold no slot, and the others are served meanwhile rather than refused with 429.
     */
    @Test
    void clientsStalledInTheirBodiesHoldNoSlot() throws Exception {
        HttpApi.Route echo = new HttpApi.Route(
                "POST",
                "/echo",
                ApiKeys.Role.READ,
                false,
                null,
                r -> HttpApi.Reply.ok(Map.of("bytes", r.body().length)));
        try (HttpApi one = keyless(2, echo)) {
            List<Socket> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    Socket socket = new Socket("127.0.0.1", one.port());
                    stalled.add(socket);
                    socket.getOutputStream()
                            .write(("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                            + "Content-Length: 100\r\n\r\n{\"query\":")
                                    .getBytes(StandardCharsets.US_ASCII));
                    socket.getOutputStream().flush();
                }
                TimeUnit.MILLISECONDS.sleep(300); // each one's handler is waiting for the rest of its body
                for (int i = 0; i < 3; i++) {
                    ItSupport.Response r = ItSupport.post("http://127.0.0.1:" + one.port() + "/echo", "{\"a\": 1}");
                    assertThat(r.status()).isEqualTo(200);
                    assertThat(r.body().path("bytes").asInt()).isEqualTo(8);
                }
            } finally {
                for (Socket socket : stalled) {
                    socket.close();
                }
            }
        }
    }

    /** A reply that cannot be written as JSON (nested past the writer's limit) is a JSON 500, never a closed connection. */
    @Test
    void aReplyThatCannotBeWrittenIsAJson500() throws Exception {
        HttpApi.Route deep = new HttpApi.Route("GET", "/deep", ApiKeys.Role.READ, false, null, r -> {
            Object nested = 1;
            for (int i = 0; i < 1100; i++) {
                nested = List.of(nested);
            }
            return HttpApi.Reply.ok(Map.of("nested", nested));
        });
        try (HttpApi one = keyless(2, deep)) {
            ItSupport.Response r = ItSupport.get("http://127.0.0.1:" + one.port() + "/deep");
            assertThat(r.status()).isEqualTo(500);
            assertThat(r.body().path("error").path("code").asText()).isEqualTo("internal");
        }
    }

    /**
     * Replies are compact: metadata nested as deep as a document may hold it (32 levels) comes back at the size it was
     * sent, where indentation made it several times larger.
     */
    @Test
    void aReplyIsCompactJsonWhateverItsDepth() throws Exception {
        Map<String, Object> metadata = new LinkedHashMap<>();
        for (int i = 0; i < 2000; i++) {
            metadata.put("k" + i, i);
        }
        Object nested = metadata;
        for (int i = 0; i < 31; i++) {
            nested = Map.of("m", nested);
        }
        byte[] asSent = Json.toBytes(nested);
        Object reply = nested;
        HttpApi.Route deep =
                new HttpApi.Route("GET", "/deep", ApiKeys.Role.READ, false, null, r -> HttpApi.Reply.ok(reply));
        try (HttpApi one = keyless(2, deep)) {
            ItSupport.Response r = ItSupport.get("http://127.0.0.1:" + one.port() + "/deep");
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.raw().body()).doesNotContain("\n").hasSize(asSent.length);
            assertThat(r.body()).isEqualTo(Json.mapper().readTree(asSent));
        }
    }

    /** An instance without keys serving {@code routes} on a port of its own, {@code slots} requests at once. */
    private HttpApi keyless(int slots, HttpApi.Route... routes) throws IOException {
        return keyless(slots, slots, routes);
    }

    /** As {@link #keyless(int, HttpApi.Route...)}, with at most {@code perNamespace} requests of one namespace. */
    private HttpApi keyless(int slots, int perNamespace, HttpApi.Route... routes) throws IOException {
        return new HttpApi(
                new InetSocketAddress("127.0.0.1", 0),
                List.of(routes),
                new NamespaceRouter(streams, new HostInfo("127.0.0.1", 1)),
                null,
                Origins.local("localhost"),
                slots,
                perNamespace,
                Meters.detached());
    }

    /** A full consistency check reads every object of the mirrors: a read key gets the bounded one only. */
    @Test
    void aFullConsistencyCheckNeedsAnAdminKey() {
        ApiKeys keys = new ApiKeys(ApiKeys.parseInline("admin:*:root-key;read:ns:ns-reader"));
        HttpApi.Route route = new Routes(null, () -> null, () -> "", noMirrors())
                .table().stream()
                        .filter(r -> r.template().equals("/v1/namespaces/{ns}/consistency"))
                        .findFirst()
                        .orElseThrow();
        HttpApi.Request asReader = consistencyRequest(keys, "ns-reader", "true");
        assertThatThrownBy(() -> route.handler().handle(asReader))
                .isInstanceOfSatisfying(
                        ApiException.class, e -> assertThat(e.status()).isEqualTo(403));
        HttpApi.Request badFlag = consistencyRequest(keys, "root-key", "yes");
        assertThatThrownBy(() -> route.handler().handle(badFlag))
                .isInstanceOfSatisfying(
                        ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
        HttpApi.Request asAdmin = consistencyRequest(keys, "root-key", "true");
        // past the role check: this instance has no mirror to compare with
        assertThatThrownBy(() -> route.handler().handle(asAdmin))
                .isInstanceOfSatisfying(
                        QueryException.class, e -> assertThat(e.kind()).isEqualTo(QueryException.Kind.NOT_CONFIGURED));
    }

    /** A consistency check of namespace "ns" with {@code full} as given, by the holder of {@code key}. */
    private static HttpApi.Request consistencyRequest(ApiKeys keys, String key, String full) {
        return new HttpApi.Request(
                "GET",
                Map.of("ns", "ns"),
                Map.of("full", List.of(full)),
                new byte[0],
                keys.authenticate(key).orElseThrow(),
                key);
    }

    /** A parameter given twice is a 400; counts are ASCII digits, without a sign or the digits of other scripts. */
    @Test
    void aParameterIsGivenOnceAndACountIsAsciiDigits() throws Exception {
        try (HttpApi one = keyless(2, echo())) {
            ItSupport.Response twice = ItSupport.get("http://127.0.0.1:" + one.port() + "/echo/x?q=1&other=2&q=3");
            assertThat(twice.status()).isEqualTo(400);
            assertThat(twice.body().path("error").path("message").asText()).contains("'q' is given more than once");
        }
        assertThat(Routes.digits("42")).isEqualTo("42");
        for (String notDigits : List.of("+2", "-1", "", "٣", "２", "1 ", "0x1")) {
            assertThatThrownBy(() -> Routes.digits(notDigits)).as(notDigits).isInstanceOf(NumberFormatException.class);
        }
    }

    /** A route that answers its path parameter and its query parameter {@code q} as the handler read them. */
    private static HttpApi.Route echo() {
        return new HttpApi.Route(
                "GET",
                "/echo/{id}",
                ApiKeys.Role.READ,
                false,
                null,
                r -> HttpApi.Reply.ok(Map.of("id", r.path().get("id"), "q", String.valueOf(r.query("q")))));
    }

    /**
     * A path segment is one parameter, percent-decoded on its own: a plus is a plus, {@code %2F} a slash of the value,
     * {@code %25} a percent sign.
     */
    @Test
    void aPathSegmentIsDecodedOnItsOwnAndAPlusIsAPlus() throws Exception {
        try (HttpApi one = keyless(2, echo())) {
            Map<String, String> cases = Map.of(
                    "c++", "c++",
                    "a%2Bb%20c", "a+b c",
                    "%C3%9Cn%C3%AFcode", "Ünïcode",
                    "%F0%9F%98%80", "😀",
                    "notes%2Fada.md", "notes/ada.md",
                    "100%25.md", "100%.md",
                    "a%3Bb", "a;b");
            for (Map.Entry<String, String> c : cases.entrySet()) {
                String response = rawGet(one.port(), "localhost", "/echo/" + c.getKey());
                assertThat(response).as(c.getKey()).startsWith("HTTP/1.1 200");
                assertThat(Json.mapper()
                                .readTree(response.substring(response.indexOf("\r\n\r\n") + 4))
                                .path("id")
                                .asText())
                        .as(c.getKey())
                        .isEqualTo(c.getValue());
            }
        }
    }

    /** A raw ';' would be read as a path parameter and cut the value short: "a;b" would name "a". Refused. */
    @Test
    void anUnescapedSemicolonInAPathSegmentIsRefused() throws Exception {
        try (HttpApi one = keyless(2, echo())) {
            for (String path : List.of("/echo/a;b", "/echo/a;", "/echo/;x")) {
                assertThat(rawGet(one.port(), "localhost", path))
                        .as(path)
                        .startsWith("HTTP/1.1 400")
                        .contains("%3B");
            }
        }
    }

    /** Percent-encoded bytes that are not UTF-8, and escapes that are not two hex digits, are a JSON 400, never replaced. */
    @Test
    void percentEncodedBytesThatAreNotUtf8AreRefusedNeverReplaced() throws Exception {
        try (HttpApi one = keyless(2, echo())) {
            for (String bad : new String[] {"%FF%FE", "%C0%AF", "%ED%A0%80", "%80", "%E2%82", "a%", "a%4", "%G1"}) {
                for (String path : List.of("/echo/" + bad, "/echo/x?q=" + bad)) {
                    String response = rawGet(one.port(), "localhost", path);
                    assertThat(response).as(path).startsWith("HTTP/1.1 400").contains("\"error\"");
                    assertThat(response).as(path).contains("application/json");
                }
            }
        }
    }

    @Test
    void aPlusInAQueryIsASpaceAndAnEscapedPlusAPlus() throws Exception {
        try (HttpApi one = keyless(2, echo())) {
            String at = "http://127.0.0.1:" + one.port() + "/echo/x?q=";
            assertThat(ItSupport.get(at + "Ada+Lovelace").body().path("q").asText())
                    .isEqualTo("Ada Lovelace");
            assertThat(ItSupport.get(at + "c%2B%2B").body().path("q").asText()).isEqualTo("c++");
            assertThat(ItSupport.get(at + "a%20b").body().path("q").asText()).isEqualTo("a b");
        }
    }

    @Test
    void aBodyOfExactlyTheLimitIsReadAndOneByteMoreIs413() {
        String at = "{\"query\": \"" + "x".repeat(64 * 1024 - 13) + "\"}";
        assertThat(at.getBytes(StandardCharsets.UTF_8)).hasSize(64 * 1024);

        // read, then refused by the (not yet running) instance's router
        assertThat(ItSupport.post(base + "/v1/namespaces/ns/retrieve", at).status())
                .isEqualTo(503);
        ItSupport.Response past = ItSupport.post(base + "/v1/namespaces/ns/retrieve", at.replace("x\"", "xx\""));
        assertThat(past.status()).isEqualTo(413);
        assertThat(past.body().path("error").path("code").asText()).isEqualTo("too_large");
    }

    @Test
    void anAbbreviationNeverCutsACharacterInTwo() {
        String faces = "\uD83D\uDE00".repeat(150); // 300 chars, each face a surrogate pair
        String cut = HttpApi.abbreviate(faces);
        assertThat(cut).endsWith("...").hasSizeLessThanOrEqualTo(200);
        assertThat(Character.isHighSurrogate(cut.charAt(cut.length() - 4))).isFalse();
        assertThat(HttpApi.abbreviate("x" + faces)).hasSize(200);
        assertThat(HttpApi.abbreviate("short")).isEqualTo("short");
    }
}
