package dev.engram.understanding.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback stand-in for an OpenAI-compatible API: no real LLM can run on the test machines, so this server
 * speaks the same HTTP protocol ({@code POST /v1/chat/completions}, {@code POST /v1/embeddings}) and answers with
 * recorded responses from {@code src/test/resources/llm}, queued per test, including errors, Retry-After and delays.
 * It records every request it receives. Shared with other modules' tests through this module's test jar.
 */
public final class FakeOpenAiServer implements AutoCloseable {

    /**
     * One queued answer: status, body resource, headers, a delay before answering, and a gate the answer waits for
     * (null: none).
     */
    public record Reply(
            int status, String resource, Map<String, String> headers, long delayMillis, CountDownLatch gate) {
        public Reply(int status, String resource, Map<String, String> headers, long delayMillis) {
            this(status, resource, headers, delayMillis, null);
        }

        public static Reply ok(String resource) {
            return new Reply(200, resource, Map.of(), 0);
        }

        /** A success that is sent only once {@code gate} opens: a call that takes as long as the test wants. */
        public static Reply okAfter(String resource, CountDownLatch gate) {
            return new Reply(200, resource, Map.of(), 0, gate);
        }

        public static Reply status(int status, String resource) {
            return new Reply(status, resource, Map.of(), 0);
        }
    }

    private final HttpServer server;
    private final ConcurrentLinkedQueue<Reply> replies = new ConcurrentLinkedQueue<>();
    /** Replies for requests whose body contains a given text, taken before the shared queue. */
    private final Map<String, ConcurrentLinkedQueue<Reply>> routed = new ConcurrentHashMap<>();

    private final List<JsonNode> requests = new CopyOnWriteArrayList<>();
    private final List<Map<String, List<String>>> headers = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();

    public FakeOpenAiServer() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/", this::handle);
        server.start();
    }

    public URI baseUrl() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1");
    }

    public FakeOpenAiServer enqueue(Reply... r) {
        replies.addAll(List.of(r));
        return this;
    }

    /** Queues replies for the requests whose body contains {@code text} (e.g. a passage's words). */
    public FakeOpenAiServer enqueueFor(String text, Reply... r) {
        routed.computeIfAbsent(text, k -> new ConcurrentLinkedQueue<>()).addAll(List.of(r));
        return this;
    }

    /** The requests received whose body contains {@code text}. */
    public long requestsFor(String text) {
        return requests.stream().filter(r -> r.toString().contains(text)).count();
    }

    public List<JsonNode> requests() {
        return requests;
    }

    List<Map<String, List<String>>> headers() {
        return headers;
    }

    int maxInFlight() {
        return maxInFlight.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        try (exchange) {
            byte[] request = exchange.getRequestBody().readAllBytes();
            requests.add(Json.mapper().readTree(request));
            headers.add(Map.copyOf(exchange.getRequestHeaders()));
            Reply reply = routedReply(new String(request, StandardCharsets.UTF_8));
            if (reply == null) {
                reply = replies.poll();
            }
            if (reply == null) {
                reply = new Reply(500, "error-500.json", Map.of(), 0);
            }
            if (reply.delayMillis() > 0) {
                TimeUnit.MILLISECONDS.sleep(reply.delayMillis());
            }
            if (reply.gate() != null) {
                reply.gate().await();
            }
            byte[] body = resource(reply.resource());
            reply.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(reply.status(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client gave up (timeout): nothing to answer
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private Reply routedReply(String request) {
        for (Map.Entry<String, ConcurrentLinkedQueue<Reply>> route : routed.entrySet()) {
            if (request.contains(route.getKey())) {
                Reply r = route.getValue().poll();
                if (r != null) {
                    return r;
                }
            }
        }
        return null;
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = FakeOpenAiServer.class.getResourceAsStream("/llm/" + name)) {
            if (in == null) {
                return ("{\"error\": \"missing fixture " + name + "\"}").getBytes(StandardCharsets.UTF_8);
            }
            return in.readAllBytes();
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
