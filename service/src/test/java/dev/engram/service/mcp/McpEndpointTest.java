package dev.engram.service.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Json;
import dev.engram.service.ItSupport;
import dev.engram.service.cluster.MemoryAccess;
import dev.engram.service.http.ApiKeys;
import dev.engram.service.http.HttpApi;
import dev.engram.service.http.Origins;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The MCP endpoint as the official SDK's client sees it, over HTTP: each tool is one call of a route, in process, with
 * the caller's key. The routes here answer with what they were asked (no namespace, so no owner to find).
 */
class McpEndpointTest {

    private static final JsonSchemaValidator NO_OUTPUT_SCHEMAS = (schema, content) ->
            JsonSchemaValidator.ValidationResponse.asInvalid("a tool declared an output schema: " + schema);

    private HttpApi api;
    private String base;

    /** Routes that answer with what they were asked. */
    private static final HttpApi.Handler ECHO = r -> HttpApi.Reply.ok(Map.of(
            "ns", r.path().get("ns"),
            "id", String.valueOf(r.path().get("id")),
            "query", r.parameters(),
            "body", new String(r.body(), StandardCharsets.UTF_8)));

    @BeforeEach
    void start() {
        api = serve(8, 8, ECHO);
        base = "http://127.0.0.1:" + api.port();
    }

    /** The MCP endpoint over a small route table, {@code retrieve} answering retrievals; slots as given. */
    private static HttpApi serve(int slots, int perNamespace, HttpApi.Handler retrieve) {
        String ns = "/v1/namespaces/{ns}";
        List<HttpApi.Route> table = List.of(
                // as in Routes: the MCP request takes no slot, each tool call one of its namespace
                new HttpApi.Route("POST", "/mcp", ApiKeys.Role.READ, false, null, r -> null, 1 << 20, false),
                new HttpApi.Route("POST", ns + "/retrieve", ApiKeys.Role.READ, false, null, retrieve),
                new HttpApi.Route("PUT", ns + "/documents/{id}", ApiKeys.Role.WRITE, false, null, ECHO),
                new HttpApi.Route("GET", ns + "/documents/{id}", ApiKeys.Role.READ, false, null, ECHO),
                new HttpApi.Route("GET", ns, ApiKeys.Role.READ, false, null, ECHO));
        MemoryAccess memory = new MemoryAccess(table, null);
        return new HttpApi(
                new InetSocketAddress("127.0.0.1", 0),
                memory,
                Map.of("/mcp", McpEndpoint.servlet(memory)),
                new ApiKeys(ApiKeys.parseInline("read:*:reader;write:*:writer")),
                Origins.local("localhost"),
                slots,
                perNamespace,
                Meters.detached());
    }

    /**
     * A tool call takes a request slot of its namespace: a tenant whose MCP calls hold its share is refused more (the
     * tool's error, a 429 naming its namespace), while another namespace's calls are still answered.
     */
    @Test
    void aToolCallTakesASlotOfItsNamespace() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        HttpApi.Handler slow = r -> {
            if (r.namespace().equals("flood")) {
                entered.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return ECHO.handle(r);
        };
        HttpApi small = serve(4, 1, slow);
        String at = base;
        base = "http://127.0.0.1:" + small.port();
        try (McpSyncClient first = client("reader");
                McpSyncClient second = client("reader")) {
            // on a thread of its own: the SDK's blocking client does not answer on the common fork-join pool
            CompletableFuture<McpSchema.CallToolResult> holding = new CompletableFuture<>();
            Thread.ofPlatform()
                    .start(() -> holding.complete(first.callTool(
                            new McpSchema.CallToolRequest("retrieve", Map.of("namespace", "flood", "query", "q")))));
            assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();

            McpSchema.CallToolResult refused = second.callTool(
                    new McpSchema.CallToolRequest("retrieve", Map.of("namespace", "flood", "query", "q")));
            assertThat(refused.isError()).isTrue();
            assertThat(json(refused).path("error").path("code").asText()).isEqualTo("too_many_requests");
            assertThat(json(refused).path("error").path("message").asText()).contains("namespace 'flood'");
            McpSchema.CallToolResult quiet = second.callTool(
                    new McpSchema.CallToolRequest("retrieve", Map.of("namespace", "quiet", "query", "q")));
            assertThat(quiet.isError()).isFalse();
            assertThat(json(quiet).path("ns").asText()).isEqualTo("quiet");

            release.countDown();
            assertThat(holding.get(20, TimeUnit.SECONDS).isError()).isFalse();
            // the slot came back: flood is answered again
            assertThat(second.callTool(new McpSchema.CallToolRequest(
                                    "retrieve", Map.of("namespace", "flood", "query", "q")))
                            .isError())
                    .isFalse();
        } finally {
            release.countDown();
            base = at;
            small.close();
        }
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private McpSyncClient client(String key) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(base)
                .endpoint("/mcp")
                .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + key))
                .build();
        McpSyncClient client = McpClient.sync(transport)
                .requestTimeout(Duration.ofSeconds(20))
                .jsonSchemaValidator(NO_OUTPUT_SCHEMAS)
                .build();
        client.initialize();
        return client;
    }

    private static JsonNode json(McpSchema.CallToolResult r) throws Exception {
        return Json.mapper().readTree(((McpSchema.TextContent) r.content().get(0)).text());
    }

    @Test
    void aToolIsOneCallOfTheApiWithItsArguments() throws Exception {
        try (McpSyncClient client = client("writer")) {
            assertThat(client.listTools().tools())
                    .extracting(McpSchema.Tool::name)
                    .containsExactlyInAnyOrder("remember", "forget", "retrieve", "answer", "entity", "document_status");
            McpSchema.CallToolResult found = client.callTool(new McpSchema.CallToolRequest(
                    "retrieve", Map.of("namespace", "notes", "query", "who?", "top_k", 3)));
            assertThat(found.isError()).isFalse();
            assertThat(json(found).path("ns").asText()).isEqualTo("notes");
            assertThat(Json.mapper().readTree(json(found).path("body").asText()))
                    .isEqualTo(Json.mapper().readTree("{\"query\": \"who?\", \"top_k\": 3}"));
            assertThat(found.structuredContent()).isNotNull();

            McpSchema.CallToolResult remembered = client.callTool(new McpSchema.CallToolRequest(
                    "remember", Map.of("namespace", "notes", "id", "a/b.md", "text", "Ada wrote notes.")));
            assertThat(json(remembered).path("id").asText()).isEqualTo("a/b.md");
            assertThat(json(remembered).path("query").path("wait").get(0).asText())
                    .isEqualTo("verified");

            McpSchema.ReadResourceResult read = client.readResource(
                    new McpSchema.ReadResourceRequest("engram://namespaces/notes/documents/a%2Fb.md"));
            assertThat(((McpSchema.TextResourceContents) read.contents().get(0)).text())
                    .contains("\"id\":\"a/b.md\"");
        }
    }

    /** A read key reaches the tools that read, and a tool that writes is the tool's error: 403, with the reason. */
    @Test
    void aReadKeyCannotRemember() throws Exception {
        try (McpSyncClient client = client("reader")) {
            McpSchema.CallToolResult refused = client.callTool(
                    new McpSchema.CallToolRequest("remember", Map.of("namespace", "notes", "id", "x", "text", "y")));
            assertThat(refused.isError()).isTrue();
            assertThat(json(refused).path("error").path("code").asText()).isEqualTo("forbidden");
            assertThat(client.callTool(
                                    new McpSchema.CallToolRequest("retrieve", Map.of("namespace", "n", "query", "q")))
                            .isError())
                    .isFalse();
        }
        ItSupport.Response anonymous = ItSupport.post(base + "/mcp", "{}");
        assertThat(anonymous.status()).isEqualTo(401);
    }

    /** A tool's input schema allows no other argument, and wants its required ones: refused, never ignored. */
    @Test
    void anArgumentAToolDoesNotDeclareIsRefused() {
        try (McpSyncClient client = client("reader")) {
            for (Map<String, Object> args : List.of(
                    Map.<String, Object>of("namespace", "a", "query", "x", "extra", 1),
                    Map.<String, Object>of("namespace", "a"),
                    Map.<String, Object>of("namespace", "a", "query", "x", "top_k", "5"))) {
                McpSchema.CallToolResult r;
                try {
                    r = client.callTool(new McpSchema.CallToolRequest("retrieve", args));
                } catch (McpError e) {
                    // refused as a protocol error: invalid params
                    assertThat(e.getJsonRpcError().code()).as(args.toString()).isEqualTo(-32602);
                    continue;
                }
                assertThat(r.isError()).as(args.toString()).isTrue();
                assertThat(((McpSchema.TextContent) r.content().get(0)).text())
                        .as(args.toString())
                        .doesNotContain("\"ns\"");
            }
        }
    }

    /** What is not one JSON-RPC message over POST is refused by the transport; GET opens no stream. */
    @Test
    void anythingButOneJsonRpcMessageIsRefused() {
        for (String body : List.of("", "null", "[]", "{not json", "\"ping\"")) {
            ItSupport.Response r = ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/mcp"))
                    .header("Authorization", "Bearer reader")
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(body)));
            assertThat(r.status()).as(body).isGreaterThanOrEqualTo(400).isLessThan(500);
        }
        // what the transport itself refuses is a JSON-RPC error too, never the exception it was
        for (String accept : List.of("application/json, text/event-stream", "text/plain")) {
            ItSupport.Response unknown = ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/mcp"))
                    .header("Authorization", "Bearer reader")
                    .header("Content-Type", "application/json")
                    .header("Accept", accept)
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"nope\"}")));
            assertThat(unknown.raw().body())
                    .as(accept)
                    .doesNotContain("stackTrace")
                    .contains("\"error\"");
            assertThat(unknown.body().path("error").path("code").asInt())
                    .as(accept)
                    .isNegative();
        }
        // a call that does not name what it acts on is told so, not failed inside the SDK
        for (String call : List.of(
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\"}",
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": {}}",
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": {\"name\": 7}}",
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\","
                        + " \"params\": {\"name\": \"retrieve\", \"arguments\": \"x\"}}",
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"resources/read\", \"params\": {}}",
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"resources/read\"}")) {
            ItSupport.Response r = ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/mcp"))
                    .header("Authorization", "Bearer reader")
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(call)));
            assertThat(r.status()).as(call).isEqualTo(400);
            assertThat(r.body().path("error").path("code").asInt()).as(call).isEqualTo(-32602);
            assertThat(r.body().path("error").path("message").asText()).as(call).startsWith("invalid params");
            assertThat(r.body().path("id").asInt()).as(call).isEqualTo(1); // the call it answers
        }
        ItSupport.Response get = ItSupport.call(HttpRequest.newBuilder(URI.create(base + "/mcp"))
                .header("Authorization", "Bearer reader")
                .GET());
        assertThat(get.status()).isEqualTo(405);
        assertThat(Set.of(get.raw().headers().firstValue("Allow").orElse(""))).contains("POST");
    }

    /** Template values are percent-decoded as clients fill them in; a value written as it is names itself. */
    @Test
    void resourceTemplateValuesAreReadAsFilledInOrAsWritten() {
        assertThat(McpEndpoint.templateValue("notes%2Fada.md", "u")).isEqualTo("notes/ada.md");
        assertThat(McpEndpoint.templateValue("caf%C3%A9", "u")).isEqualTo("café");
        assertThat(McpEndpoint.templateValue("café", "u")).isEqualTo("café");
        assertThat(McpEndpoint.templateValue("Ã©", "u")).isEqualTo("Ã©");
        assertThat(McpEndpoint.templateValue("100%.md", "u")).isEqualTo("100%.md");
        assertThat(McpEndpoint.templateValue("日本", "u")).isEqualTo("日本");
        // an escape is two ASCII hex digits: full-width and other scripts' digits are themselves
        assertThat(McpEndpoint.templateValue("a%２Ｆb", "u")).isEqualTo("a%２Ｆb");
        assertThat(McpEndpoint.templateValue("%٤١.md", "u")).isEqualTo("%٤١.md");
        assertThat(McpEndpoint.templateValue("%4a%4A", "u")).isEqualTo("JJ");
        assertThatThrownBy(() -> McpEndpoint.templateValue("%FF", "u")).hasMessageContaining("not UTF-8");
    }
}
