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
 * and {@code /v1/health} on {@code ENGRAM_HTTP_PORT}.
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
        http.createContext("/metrics", x -> reply(x, 200, "text/plain; version=0.0.4", registry.scrape()));
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

    private static void reply(HttpExchange x, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(UTF_8);
        x.getResponseHeaders().set("Content-Type", type);
        x.sendResponseHeaders(status, bytes.length);
        try (OutputStream o = x.getResponseBody()) {
            o.write(bytes);
        }
    }
}
