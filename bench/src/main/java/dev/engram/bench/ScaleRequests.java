package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The scale benchmark's requests to the service over HTTP: a timed retrieval in its namespace, the wait for a snapshot
 * of the namespace's last change, and the snapshot builds from the metrics endpoint.
 */
final class ScaleRequests {

    private ScaleRequests() {}

    /** One retrieval, timed end to end; fails unless it is answered with 200. */
    static double retrieve(HttpClient http, String base, String mode, String question) throws Exception {
        ObjectNode body = Json.mapper().createObjectNode();
        Retrieval.Variant variant = Retrieval.Variant.parse(mode);
        body.put("query", question).put("mode", variant.mode()).put("top_k", 5);
        ObjectNode params = body.putObject("params");
        variant.params().forEach(params::put);
        long t0 = System.nanoTime();
        HttpResponse<String> r = post(http, base, body);
        double ms = (System.nanoTime() - t0) / 1e6;
        if (r.statusCode() != 200) {
            throw new IllegalStateException(mode + " answered " + r.statusCode() + ": " + r.body());
        }
        return ms;
    }

    /** A retrieval request to the namespace. */
    private static HttpResponse<String> post(HttpClient http, String base, ObjectNode body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + ScaleBenchmark.NS + "/retrieve"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Asks until an answer comes from a snapshot of the namespace's last memory change ({@code graph_version} equal to
     * the watermark's {@code version}); returns the seconds waited, negated when twenty minutes passed without one (a
     * snapshot that took {@code b} to build serves for {@code 3·b} under the default build share: at 100k passages,
     * minutes).
     */
    static double awaitCurrentSnapshot(HttpClient http, String base, String question) throws Exception {
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofMinutes(20).toNanos();
        while (true) {
            ObjectNode body = Json.mapper().createObjectNode();
            body.put("query", question).put("mode", "dense").put("top_k", 1);
            HttpResponse<String> r = post(http, base, body);
            JsonNode watermark = Json.mapper().readTree(r.body()).path("watermark");
            if (watermark.path("graph_version").asLong(-1)
                    == watermark.path("version").asLong(-2)) {
                return (System.nanoTime() - t0) / 1e9;
            }
            if (System.nanoTime() > deadline) {
                System.err.println("no snapshot of the namespace's last change after 20 minutes: " + r.body());
                return -(System.nanoTime() - t0) / 1e9;
            }
            Thread.sleep(1000);
        }
    }

    /**
     * The snapshot builds so far, from the service's Prometheus endpoint: the seconds they took in all, how many there
     * were, and the longest of the last few minutes (Micrometer's decaying maximum).
     */
    static double[] snapshotBuilds(HttpClient http, String base) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        double[] sumCountMax = new double[3];
        for (String line : r.body().split("\n")) {
            if (!line.startsWith("engram_snapshot_builds_seconds") || !line.contains("outcome=\"ok\"")) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (line.startsWith("engram_snapshot_builds_seconds_sum")) {
                sumCountMax[0] += value;
            } else if (line.startsWith("engram_snapshot_builds_seconds_count")) {
                sumCountMax[1] += value;
            } else if (line.startsWith("engram_snapshot_builds_seconds_max")) {
                sumCountMax[2] = Math.max(sumCountMax[2], value);
            }
        }
        return sumCountMax;
    }
}
