package dev.engram.stores;

import java.time.Instant;

/** Something the memory step would not accept without a person's look: what, from where, and why. */
public record ReviewItem(
        String namespace,
        String passageId,
        String documentId,
        String kind,
        String subject,
        String reason,
        String extractor,
        Instant at) {}
