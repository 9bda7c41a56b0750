package dev.engram.service.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Pattern;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.Json;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.Utf8;
import java.io.IOException;
import java.util.Map;

/**
 * The request bodies of the HTTP API, one record each, bound strictly from JSON (no string-to-number or
 * number-to-string coercion, no fractional counts, no unknown or duplicate fields, no trailing data) and validated
 * in their constructors; whatever does not bind or validate is a 400 that says which field is wrong.
 */
public final class Requests {

    /** The mode used when a request names none: the best measured on the evaluation sets (see docs/evaluation.md). */
    static final String DEFAULT_MODE = "hybrid";

    static final int MAX_QUERY_CHARS = 4096;
    static final int MAX_TOP_K = 100;
    static final int MAX_REASON_CHARS = 2000;
    static final Pattern ENTITY_ID = Pattern.compile("[0-9a-f]{32}");

    private static final ObjectMapper STRICT = Json.strictMapper();

    private Requests() {}

    /** {@code POST /retrieve} and {@code POST /answer}: {@code {"query": "...", "mode": "hybrid", "top_k": 5}}. */
    record Retrieve(String query, String mode, Integer topK, Map<String, Double> params) {
        static final String EXAMPLE = "{\"query\": \"...\", \"top_k\": 5}";

        Retrieve {
            if (query == null || !DocumentDecoder.visible(query)) {
                throw ApiException.badRequest(
                        "'query' must be a string with a visible character (not only white space, control or format"
                                + " characters)");
            }
            if (query.codePointCount(0, query.length()) > MAX_QUERY_CHARS) {
                throw ApiException.badRequest("'query' is longer than " + MAX_QUERY_CHARS + " characters");
            }
            mode = mode == null ? DEFAULT_MODE : mode;
            topK = topK == null ? 5 : topK;
            if (topK < 1 || topK > MAX_TOP_K) {
                throw ApiException.badRequest("'top_k' must be an integer from 1 to " + MAX_TOP_K);
            }
            params = params == null ? Map.of() : params;
            for (Map.Entry<String, Double> p : params.entrySet()) {
                if (p.getValue() == null) {
                    throw ApiException.badRequest("parameter '" + p.getKey() + "' must be a number");
                }
            }
        }
    }

    /**
     * {@code PUT /documents/{id}}: {@code {"title": "...", "text": "...", "source": "...", "metadata": {...},
     * "event_time": "2026-01-01T00:00:00Z"}}; only {@code text} is required. Whatever else a document must be is the
     * stream's rule ({@code DocumentDecoder}), applied to the event this body becomes.
     */
    record Document(String title, String text, String source, Map<String, Object> metadata, String eventTime) {
        static final String EXAMPLE = "{\"title\": \"...\", \"text\": \"...\"}";

        Document {
            if (text == null) {
                throw ApiException.badRequest("'text' is required: the document's text");
            }
        }
    }

    /** {@code POST /merges}: {@code {"op": "split" | "merge" | "clear", "entity_id", "other_id", "reason"}}. */
    record Command(String op, String entityId, String otherId, String reason) {
        static final String EXAMPLE = "{\"op\": \"split\", \"entity_id\": \"…\", \"other_id\": \"…\"}";

        Command {
            if (op == null || !(op.equals("split") || op.equals("merge") || op.equals("clear"))) {
                throw ApiException.badRequest("'op' must be one of split, merge, clear");
            }
            if (entityId == null
                    || otherId == null
                    || !ENTITY_ID.matcher(entityId).matches()
                    || !ENTITY_ID.matcher(otherId).matches()) {
                throw ApiException.badRequest(
                        "'entity_id' and 'other_id' must be entity ids (32 lowercase hex digits)");
            }
            if (reason != null
                    && (reason.codePointCount(0, reason.length()) > MAX_REASON_CHARS
                            || !Utf8.encodable(reason)
                            || reason.chars()
                                    .anyMatch(ch -> Character.getType(ch) == Character.CONTROL
                                            && ch != '\n'
                                            && ch != '\r'
                                            && ch != '\t'))) {
                throw ApiException.badRequest("'reason' must be a string of at most " + MAX_REASON_CHARS
                        + " characters, without control characters (but line ends and tabs)");
            }
            reason = reason == null ? "" : reason;
        }

        MemoryCommand.Op operation() {
            return switch (op) {
                case "split" -> MemoryCommand.Op.SPLIT;
                case "merge" -> MemoryCommand.Op.MERGE;
                default -> MemoryCommand.Op.CLEAR;
            };
        }
    }

    /** Binds a body to a request record, or a 400 that shows what one looks like. */
    static <T> T read(byte[] body, Class<T> type, String example) {
        return bind(object(body, example), type, example);
    }

    /** A body as a JSON object (strict UTF-8, no duplicate fields, no trailing data), or a 400. */
    public static ObjectNode object(byte[] body, String example) {
        // parsed from the strictly decoded text, never from the bytes: the parser would take bytes that are not
        // UTF-8 for UTF-16 or UTF-32, or decode overlong forms
        String text = Utf8.decode(body).orElseThrow(() -> ApiException.badRequest("body is not valid UTF-8"));
        JsonNode tree;
        try {
            tree = STRICT.readTree(text);
        } catch (IOException e) {
            throw ApiException.badRequest("body is not valid JSON: " + Json.problem(e));
        }
        if (tree == null || !tree.isObject()) {
            throw ApiException.badRequest("body must be a JSON object like " + example);
        }
        String unkept = Json.notKeptAsRead(tree);
        if (unkept != null) {
            // before anything writes it: 1e400 would be written as the string "Infinity"
            throw ApiException.badRequest("body: " + unkept);
        }
        return (ObjectNode) tree;
    }

    /** Binds a JSON object to a request record, or a 400 that says which field is wrong. */
    static <T> T bind(ObjectNode tree, Class<T> type, String example) {
        try {
            return STRICT.treeToValue(tree, type);
        } catch (ValueInstantiationException e) {
            if (e.getCause() instanceof ApiException api) {
                throw api;
            }
            // the record's own check failed: its message, never the names of the classes that bind it
            Throwable cause = e.getCause();
            throw ApiException.badRequest("invalid request: "
                    + (cause != null && cause.getMessage() != null
                            ? cause.getMessage()
                            : "the body does not make a request like " + example));
        } catch (UnrecognizedPropertyException e) {
            throw ApiException.badRequest(
                    "unknown field '" + e.getPropertyName() + "' (a request looks like " + example + ")");
        } catch (JsonMappingException e) {
            throw ApiException.badRequest(fieldOf(e) + " has the wrong type (a request looks like " + example + ")");
        } catch (JsonProcessingException e) {
            throw ApiException.badRequest("body is not valid JSON: " + Json.problem(e));
        }
    }

    private static String fieldOf(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getFieldName() != null) {
                path.append(path.isEmpty() ? "" : ".").append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                path.append('[').append(r.getIndex()).append(']');
            }
        }
        return path.isEmpty() ? "the body" : "'" + path + "'";
    }
}
