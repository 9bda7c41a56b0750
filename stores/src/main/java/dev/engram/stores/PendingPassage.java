package dev.engram.stores;

import dev.engram.schemas.PassageEvent;

/**
 * A passage waiting for a remote model to understand it, with where it was read (for its dead letter, should it come
 * to that) and since when its model has been failing transiently (to bound how long it waits through an outage).
 *
 * @param timestamp the record's timestamp, kept for what is emitted from it
 * @param failingSinceMs wall-clock time of the first transient failure in a row, or 0 while there is none
 */
public record PendingPassage(
        PassageEvent.Upsert passage, String topic, int partition, long offset, long timestamp, long failingSinceMs) {

    /** The same passage, failing since {@code ms}. */
    public PendingPassage failingSince(long ms) {
        return new PendingPassage(passage, topic, partition, offset, timestamp, ms);
    }
}
