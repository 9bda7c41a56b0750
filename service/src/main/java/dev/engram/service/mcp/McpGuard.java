package dev.engram.service.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.Utf8;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * The MCP transport behind a guard: what is not one JSON-RPC 2.0 message (strict UTF-8, no member twice, nothing after
 * it, no batch) is a 400 before the SDK reads it, and whatever error the transport answers is sent as a JSON-RPC error,
 * never as the exception it was.
 */
final class McpGuard extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private final transient HttpServletStatelessServerTransport transport;

    McpGuard(HttpServletStatelessServerTransport transport) {
        this.transport = transport;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        if (request.getMethod().equals("POST")) {
            byte[] message = request.getInputStream().readAllBytes();
            String problem = problem(message);
            if (problem != null) {
                boolean invalidParams = problem.startsWith("invalid params");
                int code = problem.startsWith("parse error") ? -32700 : invalidParams ? -32602 : -32600;
                // a request whose id was read is answered with it, so that its client can tell which call failed
                JsonNode id = invalidParams ? Json.treeOrMissing(message).get("id") : null;
                write(response, 400, rpcError(code, id, problem));
                return;
            }
        }
        Captured captured = new Captured(response);
        transport.service(request, captured);
        byte[] body = captured.bytes();
        if (captured.getStatus() >= 400) {
            JsonNode error = Json.treeOrMissing(body).path("jsonRpcError");
            body = rpcError(
                    error.path("code").asInt(captured.getStatus() == 413 ? -32600 : -32603),
                    error.path("message")
                            .asText(
                                    captured.error() != null
                                            ? captured.error()
                                            : "the MCP transport refused the request (HTTP " + captured.getStatus()
                                                    + ")"));
        }
        write(response, captured.getStatus(), body);
    }

    private static void write(HttpServletResponse response, int status, byte[] body) throws IOException {
        response.setStatus(status);
        if (body.length > 0) {
            response.setContentType("application/json");
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
        }
    }

    /** Why {@code body} is not one JSON-RPC 2.0 message, or null when it is one. */
    static String problem(byte[] body) {
        // from the strictly decoded text: one message, no member twice, nothing after it, and UTF-8 only
        String text = Utf8.decode(body).orElse(null);
        if (text == null) {
            return "parse error: the message is not valid UTF-8";
        }
        JsonNode message;
        try {
            message = Json.strictTrees().readTree(text);
        } catch (IOException e) {
            return "parse error: " + Json.problem(e);
        }
        if (message != null && message.isArray()) {
            return "expected one JSON-RPC message (batches are not supported)";
        }
        if (message == null || !message.isObject()) {
            return "expected a JSON-RPC 2.0 message: a JSON object";
        }
        if (!"2.0".equals(message.path("jsonrpc").textValue())) {
            return "expected \"jsonrpc\": \"2.0\"";
        }
        JsonNode id = message.get("id");
        if (id != null && !(id.isTextual() || id.isIntegralNumber())) {
            return "a request id is a string or an integer";
        }
        JsonNode method = message.get("method");
        if (method != null && !method.isTextual()) {
            return "a method is a string";
        }
        JsonNode params = message.get("params");
        if (params != null && !params.isObject()) {
            return "params are an object";
        }
        return method == null ? null : invalidParams(method.textValue(), params);
    }

    /**
     * Why the params of a call that names what it acts on do not name it, or null: the SDK hands them to the tool or
     * resource without looking, and a call without them would fail inside it rather than be told.
     */
    private static String invalidParams(String method, JsonNode params) {
        return switch (method) {
            case "tools/call" -> {
                if (params == null || !params.path("name").isTextual()) {
                    yield "invalid params: tools/call names its tool (params.name, a string)";
                }
                JsonNode arguments = params.get("arguments");
                yield arguments == null || arguments.isNull() || arguments.isObject()
                        ? null
                        : "invalid params: a tool's arguments are an object";
            }
            case "resources/read" ->
                params == null || !params.path("uri").isTextual()
                        ? "invalid params: resources/read names its resource (params.uri, a string)"
                        : null;
            default -> null;
        };
    }

    private static byte[] rpcError(int code, String message) {
        return rpcError(code, null, message);
    }

    /** A JSON-RPC error answering the request of {@code id} (null: one whose id could not be read). */
    private static byte[] rpcError(int code, JsonNode id, String message) {
        ObjectNode reply = Json.mapper().createObjectNode();
        reply.put("jsonrpc", "2.0");
        if (id == null || id.isNull()) {
            reply.putNull("id");
        } else {
            reply.set("id", id);
        }
        reply.putObject("error").put("code", code).put("message", message);
        return Json.toBytes(reply);
    }

    /** A response held back: what the transport writes is captured, to be sent (or replaced) once it is done. */
    private static final class Captured extends HttpServletResponseWrapper {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private PrintWriter writer;
        private String error;

        Captured(HttpServletResponse response) {
            super(response);
        }

        @Override
        public ServletOutputStream getOutputStream() {
            return new ServletOutputStream() {
                @Override
                public void write(int b) {
                    out.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    out.write(b, off, len);
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setWriteListener(WriteListener listener) {
                    throw new IllegalStateException("write it blocking");
                }
            };
        }

        @Override
        public PrintWriter getWriter() {
            if (writer == null) {
                writer = new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8));
            }
            return writer;
        }

        @Override
        public void sendError(int sc) {
            setStatus(sc);
        }

        @Override
        public void sendError(int sc, String msg) {
            setStatus(sc);
            error = msg;
        }

        /** What the transport said with {@code sendError}, or null. */
        String error() {
            return error;
        }

        @Override
        public void setContentLength(int len) {
            // the length of what is sent is set when it is sent
        }

        @Override
        public void setContentLengthLong(long len) {
            // as above
        }

        @Override
        public void flushBuffer() {
            if (writer != null) {
                writer.flush();
            }
        }

        byte[] bytes() {
            flushBuffer();
            return out.toByteArray();
        }
    }
}
