package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * An input that could not be processed: why (a cause fit for a metrics tag, and a readable reason), where it came
 * from, and its original bytes (base64).
 */
public record DeadLetter(
        Stage stage,
        Cause cause,
        String reason,
        String topic,
        int partition,
        long offset,
        String keyBase64,
        String valueBase64,
        Instant at) {

    /** The step that rejected the record. */
    public enum Stage {
        @JsonProperty("read")
        READ,
        @JsonProperty("understand")
        UNDERSTAND,
        @JsonProperty("construct")
        CONSTRUCT;

        /** The name in dead letters and meters. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why the record was rejected, in a few words fit for a metrics tag; the reason says more. */
    public enum Cause {
        /** The value is not JSON. */
        @JsonProperty("malformed_json")
        MALFORMED_JSON(Stage.READ),
        /** The value is JSON that its schema rejects. */
        @JsonProperty("schema")
        SCHEMA(Stage.READ),
        /** The key or value is not UTF-8. */
        @JsonProperty("invalid_utf8")
        INVALID_UTF8(Stage.READ),
        /** The value is larger than the configured limit. */
        @JsonProperty("too_large")
        TOO_LARGE(Stage.READ),
        /** The record key is not the document id. */
        @JsonProperty("key_mismatch")
        KEY_MISMATCH(Stage.READ),
        /** The value is null (a tombstone instead of a delete event). */
        @JsonProperty("null_value")
        NULL_VALUE(Stage.READ),
        /** The extractor failed on the passage. */
        @JsonProperty("extractor_error")
        EXTRACTOR_ERROR(Stage.UNDERSTAND),
        /** An operator's memory command that is not valid. */
        @JsonProperty("bad_command")
        BAD_COMMAND(Stage.CONSTRUCT),
        /** The step failed on a valid input. */
        @JsonProperty("error")
        ERROR(Stage.READ, Stage.UNDERSTAND, Stage.CONSTRUCT);

        private final Set<Stage> stages;

        Cause(Stage first, Stage... rest) {
            this.stages = EnumSet.of(first, rest);
        }

        /** The stages that reject records for this cause. */
        public Set<Stage> stages() {
            return Collections.unmodifiableSet(stages);
        }

        /** The name in dead letters and meters. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
