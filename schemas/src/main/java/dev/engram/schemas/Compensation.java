package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Objects;

/**
 * What a mirror did about one memory object it could not write: {@code compensated} when the write was rejected (or
 * half-applied) and undone in both mirrors, so that they agree without it until a repair; {@code repaired} when a
 * re-emitted object was written after all; {@code drifted} when the consistency check found a mirror disagreeing. Consumed by the memory step, which keeps each object's sync state and
 * re-emits compensated objects. Keyed by namespace.
 *
 * @param version the object's memory version the mirror tried to write
 * @param operation {@code upsert} or {@code delete}
 * @param subjectId the object's id
 */
public record Compensation(
        String namespace,
        long version,
        Sink sink,
        MirrorRecord.Kind kind,
        String operation,
        String subjectId,
        Outcome outcome,
        String reason,
        int attempts,
        Instant at) {

    public Compensation {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(sink, "sink");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(subjectId, "subjectId");
        Objects.requireNonNull(outcome, "outcome");
        reason = reason == null ? "" : reason;
    }

    /** The mirror whose write failed. */
    public enum Sink {
        @JsonProperty("neo4j")
        NEO4J,
        @JsonProperty("qdrant")
        QDRANT
    }

    /** What became of the object in the mirrors. */
    public enum Outcome {
        /** Rejected and undone in every mirror; memory re-emits it later. */
        @JsonProperty("compensated")
        COMPENSATED,
        /** A re-emitted object is now in every mirror. */
        @JsonProperty("repaired")
        REPAIRED,
        /**
         * The consistency check found a mirror holding the object at another version than memory, missing it, or
         * holding it though memory does not ({@code version} is then the mirror's): memory re-emits its state, or a
         * delete.
         */
        @JsonProperty("drifted")
        DRIFTED
    }
}
