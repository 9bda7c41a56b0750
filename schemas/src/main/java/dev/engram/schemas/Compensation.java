package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/** A sink write that failed after its retries; consumed by the memory step to converge the stores. */
public record Compensation(
        String namespace,
        long version,
        Sink sink,
        String operation,
        String subjectId,
        String reason,
        int attempts,
        Instant at) {

    public enum Sink {
        @JsonProperty("neo4j")
        NEO4J,
        @JsonProperty("qdrant")
        QDRANT
    }
}
