package dev.engram.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The query parameters each route takes, as the OpenAPI document says: a request that gives another one is refused
 * rather than answered as if it had not (a misspelt {@code ?timeout=} would otherwise wait the default time, and
 * {@code /retrieve?top_k=50} answer five results).
 */
final class QueryParameters {

    /** "METHOD /template" → the names of its query parameters. */
    private final Map<String, Set<String>> byRoute = new HashMap<>();

    /** From an OpenAPI 3 document: each operation's parameters {@code in: query}, by reference or inline. */
    QueryParameters(String openApi) {
        JsonNode doc = Json.treeOrMissing(openApi.getBytes(StandardCharsets.UTF_8));
        if (!doc.path("paths").isObject()) {
            // a document without paths would check nothing: the jar is broken, not the request
            throw new IllegalStateException("the OpenAPI document has no paths to read query parameters from");
        }
        JsonNode shared = doc.path("components").path("parameters");
        doc.path("paths")
                .properties()
                .forEach(path -> path.getValue().properties().forEach(op -> {
                    Set<String> names = new TreeSet<>();
                    for (JsonNode p : op.getValue().path("parameters")) {
                        JsonNode resolved = p;
                        String ref = p.path("$ref").asText("");
                        if (ref.startsWith("#/components/parameters/")) {
                            resolved = shared.path(ref.substring("#/components/parameters/".length()));
                        }
                        if (resolved.path("in").asText("").equals("query")) {
                            names.add(resolved.path("name").asText());
                        }
                    }
                    byRoute.put(op.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey(), Set.copyOf(names));
                }));
    }

    /**
     * A 400 when the request gives a query parameter its route does not take; routes the document does not describe
     * are not checked. HEAD takes what GET takes.
     */
    void check(String method, String template, Map<String, ?> given) {
        if (given.isEmpty()) {
            return;
        }
        Set<String> takes = byRoute.get((method.equals("HEAD") ? "GET" : method) + " " + template);
        if (takes == null) {
            return;
        }
        for (String name : given.keySet()) {
            if (!takes.contains(name)) {
                throw ApiException.badRequest("unknown query parameter '" + HttpApi.abbreviate(name) + "'"
                        + (takes.isEmpty()
                                ? ": this route takes none"
                                : " (this route takes " + String.join(", ", new TreeSet<>(takes)) + ")"));
            }
        }
    }
}
