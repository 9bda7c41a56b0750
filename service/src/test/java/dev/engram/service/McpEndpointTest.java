package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the MCP endpoint refuses before it looks at the method: anything but one JSON-RPC 2.0 message. */
class McpEndpointTest {

    private final McpEndpoint mcp = new McpEndpoint("127.0.0.1", () -> 1, List::of);

    private HttpApi.Reply handle(String body) {
        return mcp.handle(
                new HttpApi.Request("POST", Map.of(), Map.of(), body.getBytes(StandardCharsets.UTF_8), null, null));
    }

    private static JsonNode body(HttpApi.Reply reply) {
        return Json.mapper().valueToTree(reply.body());
    }

    @Test
    void anythingButOneJsonRpc2MessageIsRefusedSayingWhy() {
        Object[][] cases = {
            {"", "a JSON object"},
            {"null", "a JSON object"},
            {"\"ping\"", "a JSON object"},
            {"[]", "batches are not supported"},
            {"{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"ping\"}", "\"jsonrpc\": \"2.0\""},
            {"{\"id\": 1, \"method\": \"ping\"}", "\"jsonrpc\": \"2.0\""},
            {"{\"jsonrpc\": \"2.0\", \"id\": {\"a\": 1}, \"method\": \"ping\"}", "string or an integer"},
            {"{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"ping\"}", "string or an integer"},
            {"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"method\": \"tools/list\"}", "Duplicate field"},
            {"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"} {}", "more data after the JSON value"}
        };
        for (Object[] c : cases) {
            HttpApi.Reply reply = handle((String) c[0]);
            assertThat(reply.status()).as((String) c[0]).isEqualTo(400);
            assertThat(body(reply).path("error").path("message").asText())
                    .as((String) c[0])
                    .contains((String) c[1]);
        }
        // bytes that are not UTF-8 (an overlong '/', UTF-16) are refused, never decoded into something else
        for (byte[] notUtf8 : List.of(
                new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xc0, (byte) 0xaf, '"', '}'},
                "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}".getBytes(StandardCharsets.UTF_16LE))) {
            HttpApi.Reply reply = mcp.handle(new HttpApi.Request("POST", Map.of(), Map.of(), notUtf8, null, null));
            assertThat(reply.status()).isEqualTo(400);
            assertThat(body(reply).path("error").path("code").asInt()).isEqualTo(-32700);
        }
        HttpApi.Reply ping = handle("{\"jsonrpc\": \"2.0\", \"id\": \"p-1\", \"method\": \"ping\"}");
        assertThat(ping.status()).isEqualTo(200);
        assertThat(body(ping).path("id").asText()).isEqualTo("p-1");
    }

    /** A tool's input schema allows no other argument: one it does not declare is refused, never ignored. */
    @Test
    void anArgumentAToolDoesNotDeclareIsRefused() {
        JsonNode reply = body(handle("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", \"params\":"
                + " {\"name\": \"retrieve\", \"arguments\": {\"namespace\": \"a\", \"query\": \"x\", \"extra\": 1}}}"));
        assertThat(reply.path("error").path("code").asInt()).isEqualTo(-32602);
        assertThat(reply.path("error").path("message").asText()).contains("'extra'");
        JsonNode notAnObject = body(handle("{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"tools/call\", \"params\":"
                + " {\"name\": \"retrieve\", \"arguments\": [1]}}"));
        assertThat(notAnObject.path("error").path("code").asInt()).isEqualTo(-32602);
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
        assertThatThrownBy(() -> McpEndpoint.templateValue("%FF", "u")).hasMessageContaining("not UTF-8");
    }
}
