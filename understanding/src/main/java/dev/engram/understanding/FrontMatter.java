package dev.engram.understanding;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.engram.schemas.Utf8;
import java.io.IOException;

/**
 * A Markdown document's YAML front matter: a first line {@code ---}, then YAML up to a line {@code ---} or {@code
 * ...}, that reads as a mapping. It is the document's metadata, not its text; its {@code title} (a non-blank string)
 * is the document's title. Anything else that starts with {@code ---} is text.
 *
 * @param body where the text after the front matter starts (0 when there is none)
 * @param metadata the mapping, or null when there is none
 */
public record FrontMatter(int body, ObjectNode metadata) {

    private static final FrontMatter NONE = new FrontMatter(0, null);

    /** Front matter longer than this is read as text: metadata is a few lines. */
    static final int MAX_CHARS = 64 * 1024;

    private static final YAMLMapper YAML = new YAMLMapper();

    /** The front matter {@code text} starts with, or one with no metadata. */
    public static FrontMatter of(String text) {
        return read(text, null);
    }

    /**
     * Why {@code text}, which opens with a line {@code ---} and has a closing line, has no front matter: its lines are
     * not YAML, or not a mapping. Null when it has front matter, or does not look like it has (a first line other than
     * {@code ---}, or no closing line: a thematic break).
     */
    public static String problem(String text) {
        String[] why = new String[1];
        read(text, why);
        return why[0];
    }

    private static FrontMatter read(String text, String[] why) {
        int first = lineEnd(text, 0);
        if (!text.substring(0, first).strip().equals("---") || first >= text.length()) {
            return NONE;
        }
        for (int line = first + 1; line < text.length() && line - first <= MAX_CHARS; ) {
            int end = lineEnd(text, line);
            String l = text.substring(line, end).strip();
            if (l.equals("---") || l.equals("...")) {
                try {
                    JsonNode parsed = YAML.readTree(text.substring(first + 1, line));
                    if (parsed instanceof ObjectNode mapping) {
                        return new FrontMatter(Math.min(text.length(), end + 1), mapping);
                    }
                    if (why != null) {
                        why[0] = "not a mapping of keys to values";
                    }
                } catch (IOException | RuntimeException e) {
                    if (why != null) {
                        why[0] = "not YAML: " + firstLine(e.getMessage());
                    }
                }
                return NONE;
            }
            line = end + 1;
        }
        return NONE;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int nl = message.indexOf('\n');
        String line = (nl < 0 ? message : message.substring(0, nl)).strip();
        return Utf8.abbreviate(line, 201, "…");
    }

    /** Its {@code title}, stripped, or null when it has none that is a non-blank string. */
    public String title() {
        if (metadata == null || !metadata.path("title").isTextual()) {
            return null;
        }
        String t = metadata.path("title").asText().strip();
        return t.isEmpty() ? null : t;
    }

    private static int lineEnd(String text, int from) {
        int i = text.indexOf('\n', from);
        return i < 0 ? text.length() : i;
    }
}
