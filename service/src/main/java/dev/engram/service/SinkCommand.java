package dev.engram.service;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.engram.metrics.Meters;
import dev.engram.topology.Topics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;

/**
 * {@code engram sink}: the mirror sink alone, for deployments that scale it apart from the instances that serve
 * (which then run with {@code ENGRAM_MIRROR_SINK=false}). It reads the mirror topic of a running cluster as the
 * {@code <application id>-mirror} group — several sink processes share its partitions — and serves {@code /metrics}
 * and {@code /v1/health} on {@code ENGRAM_HTTP_PORT}. It follows {@code ENGRAM_AUTH} as the service does: unless it is
 * {@code disabled}, {@code /metrics} answers only a key of every namespace (the sink's series name them all), and the
 * sink refuses to start without keys.
 */
final class SinkCommand {

    private SinkCommand() {}

    static void run(EngramConfig config, PrintStream out) throws IOException, InterruptedException {
        if (config.kafka().embedded()) {
            throw new IllegalArgumentException(
                    "engram sink reads the mirror topic of a running cluster: set ENGRAM_BOOTSTRAP_SERVERS");
        }
        if (!config.mirrors().enabled()) {
            throw new IllegalArgumentException("engram sink needs ENGRAM_NEO4J_URI, ENGRAM_QDRANT_URL or both");
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Topics topics = new Topics(config.kafka().topicPrefix());
        MirrorClients mirrors = MirrorClients.open(config, topics, new Meters(registry), true);
        HttpServer http = HttpServer.create(
                new InetSocketAddress(config.http().host(), config.http().port()), 16);
        ApiKeys keys =
                config.security().enabled() ? new ApiKeys(config.security().keys()) : null;
        http.createContext("/metrics", x -> {
            String refused = refusal(keys, HttpApi.presentedKey(x));
            if (refused == null) {
                reply(x, 200, "text/plain; version=0.0.4", registry.scrape());
            } else if (refused.equals("unauthorized")) {
                x.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                reply(
                        x,
                        401,
                        "application/json",
                        error(refused, "an API key is required (Authorization: Bearer <key>)"));
            } else {
                reply(x, 403, "application/json", error(refused, "the sink's metrics need a key of every namespace"));
            }
        });
        http.createContext(
                "/v1/health",
                x -> reply(
                        x,
                        mirrors.running() ? 200 : 503,
                        "application/json",
                        "{\"status\":\"" + (mirrors.running() ? "UP" : "DOWN") + "\"}"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            http.stop(0);
                            mirrors.close();
                            registry.close();
                            stopped.countDown();
                        },
                        "engram-sink-shutdown"));
        mirrors.start();
        http.start();
        out.printf(
                "engram: mirror sink over %s, metrics on port %d%n",
                topics.mirror().name(), http.getAddress().getPort());
        stopped.await();
    }

    /** Null when the presented key may read the sink's metrics, else the error code of the refusal. */
    static String refusal(ApiKeys keys, String presented) {
        if (keys == null) {
            return null;
        }
        ApiKeys.Key key = keys.authenticate(presented).orElse(null);
        if (key == null) {
            return "unauthorized";
        }
        return key.allNamespaces() ? null : "forbidden";
    }

    private static String error(String code, String message) {
        return "{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}";
    }

    private static void reply(HttpExchange x, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(UTF_8);
        x.getResponseHeaders().set("Content-Type", type);
        x.sendResponseHeaders(status, bytes.length);
        try (OutputStream o = x.getResponseBody()) {
            o.write(bytes);
        }
    }
}
