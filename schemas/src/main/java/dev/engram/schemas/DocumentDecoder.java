package dev.engram.schemas;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;

/**
 * Validation at the edge: turns the raw bytes of a documents-topic record into a {@link DocumentEvent}, or into the
 * reason it is not one. Never throws for bad input.
 */
public final class DocumentDecoder {

    /** The outcome of decoding one record. */
    public sealed interface Result {}

    public record Accepted(DocumentEvent event) implements Result {}

    /** Not a document event: the cause (for the dead letter and its meter) and a readable reason. */
    public record Rejected(DeadLetter.Cause cause, String reason) implements Result {}

    /** How deeply a document's metadata may nest objects and arrays (the metadata object itself is level 1). */
    public static final int MAX_METADATA_DEPTH = 32;

    private final int maxBytes;

    public DocumentDecoder(int maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive");
        }
        this.maxBytes = maxBytes;
    }

    public Result decode(byte[] key, byte[] value) {
        if (value == null) {
            return new Rejected(
                    DeadLetter.Cause.NULL_VALUE,
                    "null value: to forget a document send {\"op\":\"delete\",\"namespace\":...,\"id\":...}");
        }
        if (value.length > maxBytes) {
            return new Rejected(
                    DeadLetter.Cause.TOO_LARGE,
                    "document event is " + value.length + " bytes, above the limit of " + maxBytes);
        }
        String text = Utf8.decode(value).orElse(null);
        if (text == null) {
            return new Rejected(DeadLetter.Cause.INVALID_UTF8, "invalid UTF-8 in value");
        }
        JsonNode node;
        try {
            node = Json.strictTrees().readTree(text);
        } catch (JsonProcessingException e) {
            return new Rejected(DeadLetter.Cause.MALFORMED_JSON, "malformed JSON: " + Json.problem(e));
        }
        if (node == null || node.isMissingNode()) {
            return new Rejected(DeadLetter.Cause.MALFORMED_JSON, "malformed JSON: empty value");
        }
        List<String> errors = Schemas.DOCUMENT_EVENT.validate(node);
        if (!errors.isEmpty()) {
            return new Rejected(DeadLetter.Cause.SCHEMA, "schema: " + String.join("; ", errors));
        }
        String kept = Json.notKeptAsRead(node);
        if (kept != null) {
            return new Rejected(DeadLetter.Cause.SCHEMA, "schema: " + kept);
        }
        int depth = depth(node.get("metadata"));
        if (depth > MAX_METADATA_DEPTH) {
            return new Rejected(
                    DeadLetter.Cause.SCHEMA,
                    "schema: /metadata: nested " + depth + " levels deep, more than the " + MAX_METADATA_DEPTH
                            + " allowed");
        }
        JsonNode id = node.get("id");
        if (id != null && id.isTextual() && "upsert".equals(node.path("op").asText()) && !newId(id.asText())) {
            // a delete names a document as it was written, with the rules of then: only new ids meet these
            return new Rejected(
                    DeadLetter.Cause.SCHEMA,
                    "schema: /id: a C1 control character, no visible character (only whitespace, control or format"
                            + " characters), or '.' or '..'");
        }
        JsonNode time = node.get("event_time");
        if (time != null && time.isTextual() && !rfc3339(time.asText())) {
            return new Rejected(
                    DeadLetter.Cause.SCHEMA,
                    "schema: /event_time: '" + abbreviate(time.asText())
                            + "' is not an RFC 3339 date-time like 2026-01-01T00:00:00Z");
        }
        JsonNode body = node.get("text");
        if (body != null && body.isTextual() && "upsert".equals(node.path("op").asText()) && !visible(body.asText())) {
            return new Rejected(
                    DeadLetter.Cause.SCHEMA,
                    "schema: /text: no visible character (only whitespace, control or format characters)");
        }
        DocumentEvent event;
        try {
            event = Json.mapper().treeToValue(node, DocumentEvent.class);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            return new Rejected(DeadLetter.Cause.SCHEMA, "schema: " + e.getMessage());
        }
        if (key == null) {
            // Without the id as its key a document's events would land on any partition, out of order.
            return new Rejected(
                    DeadLetter.Cause.KEY_MISMATCH,
                    "no record key: the key must be the document id '" + abbreviate(event.id()) + "'");
        }
        String keyText = Utf8.decode(key).orElse(null);
        if (keyText == null) {
            return new Rejected(DeadLetter.Cause.INVALID_UTF8, "invalid UTF-8 in key");
        }
        if (!keyText.equals(event.id())) {
            return new Rejected(
                    DeadLetter.Cause.KEY_MISMATCH,
                    "key '" + abbreviate(keyText) + "' differs from the document id '" + abbreviate(event.id()) + "'");
        }
        return new Accepted(event);
    }

    /**
     * Whether an id may name a new document: no C1 control character (the schema refuses C0 ones and DEL for every
     * id), a visible character, and not {@code .} or {@code ..}, which a URL's path cannot hold as a segment (clients
     * remove them, servers refuse them encoded). Ids written before these rules keep working for reads and deletes.
     */
    public static boolean newId(String id) {
        return id.chars().noneMatch(c -> c >= 0x80 && c <= 0x9f) && visible(id) && !id.equals(".") && !id.equals("..");
    }

    /**
     * How deeply objects and arrays nest in a value: 0 for a scalar or nothing, 1 for an object of scalars. Beyond
     * {@link #MAX_METADATA_DEPTH}, metadata is refused: every answer that shows the document (the HTTP API, MCP tools)
     * nests it a few levels deeper again, and a reply must never reach the JSON writer's own nesting limit.
     */
    static int depth(JsonNode node) {
        if (node == null || !node.isContainerNode()) {
            return 0;
        }
        int deepest = 0;
        for (JsonNode child : node) {
            deepest = Math.max(deepest, depth(child));
        }
        return 1 + deepest;
    }

    /** A date-time with its offset (RFC 3339), a real day of a real month. */
    private static boolean rfc3339(String s) {
        try {
            OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME);
            return true;
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    /**
     * Whether a text has a character a reader can see: anything but white space, separators, control and format
     * characters (zero-width spaces, byte order marks, direction marks), marks that only change the character before
     * them (combining accents, variation selectors), and the letters and symbols that are drawn blank (Hangul fillers,
     * the blank Braille pattern).
     */
    public static boolean visible(String text) {
        return text.codePoints()
                .anyMatch(c -> !Character.isWhitespace(c)
                        && !BLANK.contains(c)
                        && switch (Character.getType(c)) {
                            case Character.SPACE_SEPARATOR,
                                    Character.LINE_SEPARATOR,
                                    Character.PARAGRAPH_SEPARATOR,
                                    Character.CONTROL,
                                    Character.FORMAT,
                                    Character.NON_SPACING_MARK,
                                    Character.ENCLOSING_MARK -> false;
                            default -> true;
                        });
    }

    /** Characters of visible categories that are drawn blank: the Hangul fillers and the blank Braille pattern. */
    private static final Set<Integer> BLANK = Set.of(0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800);

    private static String abbreviate(String s) {
        return Utf8.abbreviate(s, 80, "...");
    }
}
