package dev.engram.topology;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/** A topic with the serdes of its keys and values: the one place that says how its records are written. */
public record Topic<K, V>(String name, Serde<K> keySerde, Serde<V> valueSerde) {

    /** Reading this topic, as the named source processor. */
    public Consumed<K, V> consumed(String processorName) {
        return Consumed.with(keySerde, valueSerde).withName(processorName);
    }

    /** Writing this topic, as the named sink processor. */
    public Produced<K, V> produced(String processorName) {
        return Produced.with(keySerde, valueSerde).withName(processorName);
    }
}
