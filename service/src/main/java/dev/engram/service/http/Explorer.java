package dev.engram.service.http;

import dev.engram.service.http.HttpApi.Reply;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The memory explorer: one page and its script and style, bundled in the jar and served by every instance at
 * {@code /}. The page holds no data; it calls the HTTP API with the key its user gives it, so it sees exactly what the
 * key may see (docs/explorer.md).
 */
final class Explorer {

    private static final String DIR = "explorer/";
    private static final Map<String, String> TYPES = Map.of(
            "index.html", "text/html; charset=utf-8",
            "app.js", "text/javascript; charset=utf-8",
            "app.css", "text/css; charset=utf-8");
    private static final Map<String, String> FILES = load();

    private Explorer() {}

    static Reply page() {
        return asset("index.html");
    }

    /** One of the explorer's files; any other name is a 404, so nothing else of the jar can be read. */
    static Reply asset(String name) {
        String text = FILES.get(name);
        if (text == null) {
            throw ApiException.notFound("the explorer has no file '" + name + "'");
        }
        return Reply.text(TYPES.get(name), text);
    }

    private static Map<String, String> load() {
        Map<String, String> files = new HashMap<>();
        for (String name : TYPES.keySet()) {
            try (InputStream in = Explorer.class.getResourceAsStream(DIR + name)) {
                if (in == null) {
                    throw new IllegalStateException(DIR + name + " is missing from the jar");
                }
                files.put(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return Map.copyOf(files);
    }
}
