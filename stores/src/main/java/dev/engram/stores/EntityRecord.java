package dev.engram.stores;

import dev.engram.schemas.EntityType;

/** An entity of a namespace, with reference counts over the passages that mention it. */
public record EntityRecord(
        String namespace, String id, String name, String normalized, EntityType type, int mentions, int passages) {}
