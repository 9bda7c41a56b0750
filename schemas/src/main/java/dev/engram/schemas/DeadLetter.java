package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/** An input that could not be processed: why, where it came from, and its original bytes (base64). */
public record DeadLetter(
        Stage stage,
        String reason,
        String topic,
        int partition,
        long offset,
        String keyBase64,
        String valueBase64,
        Instant at) {

    public enum Stage {
        @JsonProperty("read")
        READ,
        @JsonProperty("understand")
        UNDERSTAND,
        @JsonProperty("construct")
        CONSTRUCT
    }
}
