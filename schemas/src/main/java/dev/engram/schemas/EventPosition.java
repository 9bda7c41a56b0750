package dev.engram.schemas;

/**
 * Where a record sits in Kafka: its topic, partition and offset. A document version carries the position of the
 * document event it was read from, so that a writer waiting for its own event can tell when a later one replaced it.
 */
public record EventPosition(String topic, int partition, long offset) {

    /** Whether this position is a later one of the same partition of the same topic as {@code other}. */
    public boolean after(String otherTopic, int otherPartition, long otherOffset) {
        return topic.equals(otherTopic) && partition == otherPartition && offset > otherOffset;
    }
}
