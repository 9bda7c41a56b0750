package dev.engram.topology;

import dev.engram.schemas.Json;
import java.util.Map;

/** Document events as a producer writes them, for tests. */
public final class TestDocuments {

    private TestDocuments() {}

    public static byte[] upsert(String ns, String id, String title, String text) {
        return Json.toBytes(Map.of("namespace", ns, "id", id, "op", "upsert", "title", title, "text", text));
    }

    public static byte[] delete(String ns, String id) {
        return Json.toBytes(Map.of("namespace", ns, "id", id, "op", "delete"));
    }
}
