package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Instant;
import java.util.Locale;

/**
 * An operator's decision about two surface entities, applied by the memory step of their namespace: {@code split}
 * keeps them apart whatever the rules say (undoing a merge), {@code merge} groups them, {@code clear} returns the pair
 * to the rules. Record key: the namespace.
 */
public record MemoryCommand(String namespace, Op op, String entityId, String otherId, String reason, Instant at) {

    public enum Op {
        SPLIT,
        MERGE,
        CLEAR;

        @JsonValue
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public MemoryCommand {
        reason = reason == null ? "" : reason;
    }
}
