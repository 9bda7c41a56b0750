package dev.engram.service.cli;

import dev.engram.metrics.Meters;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.MirrorClients;
import dev.engram.service.http.ApiException;
import dev.engram.service.http.ApiKeys;
import dev.engram.service.http.HttpApi;
import dev.engram.service.http.Origins;
import dev.engram.topology.Topics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;

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
        ApiKeys keys =
                config.security().enabled() ? new ApiKeys(config.security().keys()) : null;
        HttpApi http = http(
                new InetSocketAddress(config.http().host(), config.http().port()), keys, registry, mirrors::running);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            http.close();
                            mirrors.close();
                            registry.close();
                            stopped.countDown();
                        },
                        "engram-sink-shutdown"));
        mirrors.start();
        out.printf(
                "engram: mirror sink over %s, metrics on port %d%n",
                topics.mirror().name(), http.port());
        stopped.await();
    }

    /**
     * The sink's HTTP server: {@code /metrics} and {@code /v1/health}. Without keys anyone who reaches the port reads
     * the metrics, as Prometheus does; with keys, only a key of every namespace (the sink's series name them all).
     */
    static HttpApi http(
            InetSocketAddress bind, ApiKeys keys, PrometheusMeterRegistry registry, BooleanSupplier running) {
        ApiKeys.Role role = keys == null ? null : ApiKeys.Role.READ;
        List<HttpApi.Route> routes = List.of(
                new HttpApi.Route("GET", "/metrics", role, false, null, r -> {
                    if (r.caller() != null && !r.caller().allNamespaces()) {
                        throw new ApiException(403, "forbidden", "the sink's metrics need a key of every namespace");
                    }
                    return HttpApi.Reply.text("text/plain; version=0.0.4; charset=utf-8", registry.scrape());
                }),
                new HttpApi.Route(
                        "GET",
                        "/v1/health",
                        null,
                        false,
                        null,
                        r -> HttpApi.Reply.json(
                                running.getAsBoolean() ? 200 : 503,
                                Map.of("status", running.getAsBoolean() ? "UP" : "DOWN"))));
        return new HttpApi(bind, routes, null, keys, Origins.local(bind.getHostString()), 16, 16, new Meters(registry));
    }
}
