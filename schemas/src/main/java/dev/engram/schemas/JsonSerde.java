package dev.engram.schemas;

import java.io.IOException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/** Kafka serde for an Engram record type, using the shared {@link Json} mapping. */
public final class JsonSerde<T> implements Serde<T> {

    private final Class<T> type;

    private JsonSerde(Class<T> type) {
        this.type = type;
    }

    public static <T> JsonSerde<T> of(Class<T> type) {
        return new JsonSerde<>(type);
    }

    @Override
    public Serializer<T> serializer() {
        return (topic, value) -> value == null ? null : Json.toBytes(value);
    }

    @Override
    public Deserializer<T> deserializer() {
        return (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            try {
                return Json.mapper().readValue(bytes, type);
            } catch (IOException e) {
                throw new SerializationException(
                        "cannot read " + type.getSimpleName() + " from topic " + topic + ": " + Json.problem(e), e);
            }
        };
    }
}
