package dev.engram.stores;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * One state store: its name and the serde of its values (keys are composite strings, see {@link Keys}). The single
 * place a store's persistent layout is declared; the topology builds it, processors and queries open it by name.
 */
public record StoreSpec<V>(String name, Serde<V> values) {

    public static final Serde<String> KEY = Serdes.String();

    /** A persistent RocksDB store with a changelog. */
    public StoreBuilder<KeyValueStore<String, V>> builder() {
        return Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), KEY, values);
    }
}
