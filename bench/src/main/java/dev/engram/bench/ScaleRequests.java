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
     * Asks {@code question} every second until answers hold the namespace's last change: how many seconds until the
     * version they were ranked at ({@code graph_version}, which a recent layer brings forward) and until the version
     * of the whole snapshot ({@code whole_graph_version}, on which the modes that rank by links see the last passages'
     * links) were the namespace's; each negative when it did not happen within 20 minutes.
     */
    static double[] awaitCurrentSnapshot(HttpClient http, String base, String question) throws Exception {
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofMinutes(20).toNanos();
        double answers = Double.NaN;
        while (true) {
            ObjectNode body = Json.mapper().createObjectNode();
            body.put("query", question).put("mode", "dense").put("top_k", 1);
            HttpResponse<String> r = post(http, base, body);
            JsonNode watermark = Json.mapper().readTree(r.body()).path("watermark");
            long version = watermark.path("version").asLong(-2);
            double now = (System.nanoTime() - t0) / 1e9;
            if (Double.isNaN(answers) && watermark.path("graph_version").asLong(-1) == version) {
                answers = now;
            }
            if (!Double.isNaN(answers) && watermark.path("whole_graph_version").asLong(-1) == version) {
                return new double[] {answers, now};
            }
            if (System.nanoTime() > deadline) {
                System.err.println("no snapshot of the namespace's last change after 20 minutes: " + r.body());
                return new double[] {Double.isNaN(answers) ? -now : answers, -now};
            }
            Thread.sleep(1000);
        }
    }

    /**
     * The snapshot builds so far, from the service's Prometheus endpoint: the seconds they took in all, how many there
     * were, and the longest of the last few minutes (Micrometer's decaying maximum); of recent layers with
     * {@code recent}, else of whole snapshots.
     */
    static double[] snapshotBuilds(HttpClient http, String base, boolean recent) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        double[] sumCountMax = new double[3];
        for (String line : r.body().split("\n")) {
            if (!line.startsWith("engram_snapshot_builds_seconds")
                    || !line.contains("outcome=\"ok\"")
                    || line.contains("how=\"recent\"") != recent) {
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
