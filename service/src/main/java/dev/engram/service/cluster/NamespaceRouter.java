package dev.engram.service.cluster;

import dev.engram.query.NamespaceLocator;
import dev.engram.service.http.ApiException;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.state.HostInfo;

/** Finds the instance that owns a namespace's memory, from the Kafka Streams metadata. */
public final class NamespaceRouter {

    sealed interface Owner {}

    record Local() implements Owner {}

    record Remote(HostInfo host) implements Owner {}

    private final NamespaceLocator locator;
    private final HostInfo self;

    public NamespaceRouter(KafkaStreams streams, HostInfo self) {
        this(new NamespaceLocator(streams), self);
    }

    public NamespaceRouter(NamespaceLocator locator, HostInfo self) {
        this.locator = locator;
        this.self = self;
    }

    HostInfo self() {
        return self;
    }

    /** The owner of the namespace; 503 while the assignment is unknown (starting or rebalancing). */
    Owner ownerOf(String namespace) {
        KafkaStreams.State state = locator.streams().state();
        if (state != KafkaStreams.State.RUNNING) {
            throw ApiException.unavailable("instance is " + state + "; retry shortly");
        }
        KeyQueryMetadata meta = locator.metadata(namespace);
        if (meta == null || meta.activeHost() == null) {
            throw ApiException.unavailable("the owner of namespace '" + namespace + "' is not known yet");
        }
        HostInfo active = meta.activeHost();
        return active.equals(self) ? new Local() : new Remote(active);
    }
}
