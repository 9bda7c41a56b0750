package dev.engram.stores;

import dev.engram.schemas.PassageEvent;

/**
 * A passage waiting for a remote model to understand it, with where it was read (for its dead letter, should it come
 * to that) and when it was first seen (to bound how long it waits through an outage).
 *
 * @param timestamp the record's timestamp, kept for what is emitted from it
 * @param firstSeenMs wall-clock time the understand step first took the passage up
 */
public record PendingPassage(
        PassageEvent.Upsert passage, String topic, int partition, long offset, long timestamp, long firstSeenMs) {}
