package dev.engram.query;

import dev.engram.stores.StateStores;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;

/**
 * Where a namespace's memory lives, from the memory application's Kafka Streams metadata: the one lookup behind the
 * query side's stores, the routing of requests to the owning instance and the restores and catch-up probes that go
 * by partition. A namespace is the key of the memory step, so its partition and owner are those of its key in the
 * namespaces store.
 */
public final class NamespaceLocator {

    private static final StringSerializer KEYS = new StringSerializer();

    private final KafkaStreams streams;

    public NamespaceLocator(KafkaStreams streams) {
        this.streams = streams;
    }

    /** The namespace's metadata (partition, active and standby hosts), or null while it is not known. */
    public KeyQueryMetadata metadata(String ns) {
        try {
            KeyQueryMetadata m = streams.queryMetadataForKey(StateStores.MEMORY_NAMESPACES.name(), ns, KEYS);
            return m == null || m.equals(KeyQueryMetadata.NOT_AVAILABLE) ? null : m;
        } catch (RuntimeException e) {
            return null; // not started, or shutting down: not known
        }
    }

    /** The memory step's partition that holds the namespace, or -1 while that is not known (a rebalance). */
    public int partitionOf(String ns) {
        KeyQueryMetadata m = metadata(ns);
        return m == null ? -1 : m.partition();
    }

    /** The instance's Kafka Streams application. */
    public KafkaStreams streams() {
        return streams;
    }
}
