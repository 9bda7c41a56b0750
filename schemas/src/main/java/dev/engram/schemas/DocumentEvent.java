package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** A document to remember or forget, as produced by users to the documents topic. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record DocumentEvent(
        String namespace,
        String id,
        Op op,
        String title,
        String text,
        String source,
        Map<String, Object> metadata,
        Instant eventTime) {

    public enum Op {
        @JsonProperty("upsert")
        UPSERT,
        @JsonProperty("delete")
        DELETE
    }

    public DocumentEvent {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(op, "op");
        title = title == null ? "" : title;
        // a value may be null, as JSON's may be, at the top as further down
        metadata = metadata == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }

    public static DocumentEvent upsert(String namespace, String id, String title, String text) {
        return new DocumentEvent(namespace, id, Op.UPSERT, title, text, null, null, null);
    }

    public static DocumentEvent delete(String namespace, String id) {
        return new DocumentEvent(namespace, id, Op.DELETE, null, null, null, null, null);
    }
}
