package dev.engram.service.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** Reads a namespace's progress through the public HTTP API, as a user would. */
public final class DemoProbe {

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private DemoProbe() {}

    @SuppressWarnings("unchecked")
    public static Map<String, Object> namespaceStats(String base, String ns) throws InterruptedException {
        JsonNode node = get(base + "/v1/namespaces/" + ns);
        return node == null ? Map.of() : Json.mapper().convertValue(node, Map.class);
    }

    /** True when the namespace holds {@code documents} documents and none is still being read. */
    public static boolean allVerified(String base, String ns, int documents) throws InterruptedException {
        JsonNode stats = get(base + "/v1/namespaces/" + ns);
        if (stats == null || stats.path("documents").asInt() < documents) {
            return false;
        }
        return stats.path("documents_by_status").path("VERIFIED").asInt() >= documents;
    }

    private static JsonNode get(String url) throws InterruptedException {
        try {
            HttpResponse<byte[]> r = CLIENT.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            return r.statusCode() == 200 ? Json.mapper().readTree(r.body()) : null;
        } catch (IOException e) {
            return null;
        }
    }
}
