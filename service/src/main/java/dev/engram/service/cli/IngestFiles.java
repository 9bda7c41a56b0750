package dev.engram.service.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.Utf8;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The documents {@code ./engram ingest} finds under its paths: one per file (see {@link DocumentFiles}), one per line
 * of a .jsonl file.
 */
final class IngestFiles {

    private IngestFiles() {}

    /** One document to write: its id and the body of its {@code PUT}; or why it cannot be. */
    record Item(String id, String where, ObjectNode body, String problem) {}

    /** The documents under a path: text, Markdown, HTML and PDF files (one each), .jsonl files (one per line). */
    static void collect(Path path, List<Item> items) throws IOException {
        if (!Files.exists(path)) {
            throw new IllegalArgumentException(path + " does not exist");
        }
        Path base = path.toAbsolutePath().normalize().getParent();
        List<Path> files;
        if (Files.isDirectory(path)) {
            try (Stream<Path> walk = Files.walk(path)) {
                files = walk.filter(Files::isRegularFile).sorted().toList();
            }
        } else {
            files = List.of(path);
        }
        for (Path f : files) {
            String name = f.getFileName().toString();
            String lower = name.toLowerCase(Locale.ROOT);
            String id = base == null
                    ? name
                    : base.relativize(f.toAbsolutePath().normalize()).toString().replace('\\', '/');
            if (lower.endsWith(".jsonl")) {
                lines(f, id, items);
            } else if (DocumentFiles.isDocument(name)) {
                items.add(file(f, id));
            }
        }
    }

    private static Item file(Path f, String id) throws IOException {
        DocumentFiles.Read read = DocumentFiles.read(f);
        if (read.refused() != null) {
            return new Item(id, f.toString(), null, read.refused());
        }
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("title", read.title());
        body.put("text", read.text());
        body.put("source", f.toString());
        if (read.metadata() != null) {
            body.set("metadata", read.metadata()); // a Markdown file's front matter
        }
        return new Item(id, f.toString(), body, null);
    }

    /** The documents of a .jsonl file, one per line, or each line's problem. */
    static void lines(Path f, String fileId, List<Item> items) throws IOException {
        // line by line from the bytes: a line that is not UTF-8 is refused alone, not the whole run
        List<byte[]> lines = new ArrayList<>();
        byte[] all = Files.readAllBytes(f);
        for (int start = 0, i = 0; i <= all.length; i++) {
            if (i == all.length || all[i] == '\n') {
                int end = i > start && all[i - 1] == '\r' ? i - 1 : i;
                if (i < all.length || end > start) {
                    lines.add(Arrays.copyOfRange(all, start, end));
                }
                start = i + 1;
            }
        }
        for (int i = 0; i < lines.size(); i++) {
            String where = f + ":" + (i + 1);
            String line = Utf8.decode(lines.get(i)).orElse(null);
            if (line == null) {
                items.add(new Item(fileId + "#" + (i + 1), where, null, "not valid UTF-8"));
                continue;
            }
            if (line.isBlank()) {
                continue;
            }
            JsonNode node;
            try {
                node = Json.strictTrees().readTree(line); // as the API and the topic read it
            } catch (IOException e) {
                items.add(new Item(fileId + "#" + (i + 1), where, null, "not JSON: " + Json.problem(e)));
                continue;
            }
            JsonNode id = node.has("id") ? node.get("id") : node.get("doc_id");
            if (!node.isObject() || id == null || !(id.isTextual() || id.isIntegralNumber()) || !node.has("text")) {
                items.add(new Item(
                        fileId + "#" + (i + 1), where, null, "a line needs \"id\" (or \"doc_id\") and \"text\""));
                continue;
            }
            if (id.asText().isEmpty()) {
                items.add(new Item(fileId + "#" + (i + 1), where, null, "\"id\" must not be empty"));
                continue;
            }
            ObjectNode body = Json.mapper().createObjectNode();
            for (String field : List.of("title", "text", "source", "metadata", "event_time")) {
                if (node.has(field)) {
                    body.set(field, node.get(field));
                }
            }
            items.add(new Item(id.asText(), where, body, null));
        }
    }
}
