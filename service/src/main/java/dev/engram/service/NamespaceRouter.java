package dev.engram.service;

import dev.engram.stores.StateStores;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.state.HostInfo;

/** Finds the instance that owns a namespace's memory, from the Kafka Streams metadata. */
final class NamespaceRouter {

    sealed interface Owner {}

    record Local() implements Owner {}

    record Remote(HostInfo host) implements Owner {}

    private static final StringSerializer KEYS = new StringSerializer();

    private final KafkaStreams streams;
    private final HostInfo self;

    NamespaceRouter(KafkaStreams streams, HostInfo self) {
        this.streams = streams;
        this.self = self;
    }

    HostInfo self() {
        return self;
    }

    /** The owner of the namespace; 503 while the assignment is unknown (starting or rebalancing). */
    Owner ownerOf(String namespace) {
        KafkaStreams.State state = streams.state();
        if (state != KafkaStreams.State.RUNNING) {
            throw ApiException.unavailable("instance is " + state + "; retry shortly");
        }
        KeyQueryMetadata meta = streams.queryMetadataForKey(StateStores.MEMORY_NAMESPACES.name(), namespace, KEYS);
        if (meta == null || meta.equals(KeyQueryMetadata.NOT_AVAILABLE) || meta.activeHost() == null) {
            throw ApiException.unavailable("the owner of namespace '" + namespace + "' is not known yet");
        }
        HostInfo active = meta.activeHost();
        return active.equals(self) ? new Local() : new Remote(active);
    }
}
