package dev.engram.schemas;

/** An entity named in a passage, with its evidence span (UTF-16 offsets into the passage text). */
public record EntityMention(String name, EntityType type, int start, int end) {

    public EntityMention {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("entity name must not be blank");
        }
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("bad evidence span [" + start + ", " + end + ")");
        }
    }
}
