package dev.engram.service.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Calls of Engram's own HTTP API, as its clients make them: a JSON body when there is one, the key as a bearer token. */
final class ApiCalls {

    private ApiCalls() {}

    /**
     * @param base the instance, {@code http://host:port}
     * @param path the route with its query, already encoded
     * @param json the body, or null
     * @param key the API key, or null
     */
    static HttpResponse<String> send(
            HttpClient http, String base, String method, String path, String json, String key, Duration timeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(timeout)
                .method(
                        method,
                        json == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        if (key != null) {
            b.header("Authorization", "Bearer " + key);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
