package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
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
        Long valueBytes,
        String valueSha256,
        boolean truncated,
        Instant at) {

    /** Keys longer than this are kept as a prefix. */
    public static final int MAX_KEY_BYTES = 4096;
    /** Values longer than this are kept as a prefix, with the whole value's length and SHA-256. */
    public static final int MAX_VALUE_BYTES = 256 * 1024;
    /** Reasons longer than this are cut. */
    public static final int MAX_REASON_CHARS = 4096;

    /**
     * A dead letter of a record with these original bytes, bounded so that it always fits the producer's request
     * limit however large the record was: a prefix of a long key or value is kept, with the value's full length and
     * SHA-256, and {@code truncated} says so.
     */
    public static DeadLetter of(
            Stage stage,
            Cause cause,
            String reason,
            String topic,
            int partition,
            long offset,
            byte[] key,
            byte[] value,
            Instant at) {
        boolean truncated =
                (key != null && key.length > MAX_KEY_BYTES) || (value != null && value.length > MAX_VALUE_BYTES);
        return new DeadLetter(
                stage,
                cause,
                Utf8.abbreviate(reason, MAX_REASON_CHARS, "..."),
                topic,
                partition,
                offset,
                base64Prefix(key, MAX_KEY_BYTES),
                base64Prefix(value, MAX_VALUE_BYTES),
                value == null ? null : (long) value.length,
                value == null ? null : sha256(value),
                truncated,
                at);
    }

    /** The Kafka key of a dead letter: the original key, or its first {@link #MAX_KEY_BYTES} bytes. */
    public static byte[] boundedKey(byte[] key) {
        return key == null || key.length <= MAX_KEY_BYTES ? key : Arrays.copyOf(key, MAX_KEY_BYTES);
    }

    private static String base64Prefix(byte[] bytes, int max) {
        if (bytes == null) {
            return null;
        }
        return Base64.getEncoder().encodeToString(bytes.length <= max ? bytes : Arrays.copyOf(bytes, max));
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** The step that rejected the record. */
    public enum Stage {
        @JsonProperty("read")
        READ,
        @JsonProperty("understand")
        UNDERSTAND,
        @JsonProperty("construct")
        CONSTRUCT,
        /** A mirror (Neo4j, Qdrant) reading the mirror topic. */
        @JsonProperty("mirror")
        MIRROR;

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
        /** The record key is not the document id (read), or not the namespace the record names (memory step). */
        @JsonProperty("key_mismatch")
        KEY_MISMATCH(Stage.READ, Stage.CONSTRUCT),
        /** The value is null (a tombstone instead of a delete event). */
        @JsonProperty("null_value")
        NULL_VALUE(Stage.READ),
        /** The extractor failed on the passage. */
        @JsonProperty("extractor_error")
        EXTRACTOR_ERROR(Stage.UNDERSTAND),
        /** The remote model stayed unreachable or overloaded for longer than the passage may wait. */
        @JsonProperty("extractor_unavailable")
        EXTRACTOR_UNAVAILABLE(Stage.UNDERSTAND),
        /** An operator's memory command that is not valid. */
        @JsonProperty("bad_command")
        BAD_COMMAND(Stage.CONSTRUCT),
        /** A record of the compensations topic that is not a compensation. */
        @JsonProperty("bad_compensation")
        BAD_COMPENSATION(Stage.CONSTRUCT),
        /** The step failed on a valid input. */
        @JsonProperty("error")
        ERROR(Stage.READ, Stage.UNDERSTAND, Stage.CONSTRUCT),
        /** The record could not be read from its topic (not what the topic's schema holds). */
        @JsonProperty("undecodable")
        UNDECODABLE(Stage.READ, Stage.UNDERSTAND, Stage.CONSTRUCT, Stage.MIRROR),
        /** What a step made of the record could not be written to its topic (too large, or not serializable). */
        @JsonProperty("unwritable")
        UNWRITABLE(Stage.READ, Stage.UNDERSTAND, Stage.CONSTRUCT);

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
