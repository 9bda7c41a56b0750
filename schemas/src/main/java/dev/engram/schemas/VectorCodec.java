package dev.engram.schemas;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

/** Vectors as base64 of little-endian float32: a quarter of the size of JSON numbers, and exact. */
public final class VectorCodec {

    private VectorCodec() {}

    public static byte[] toBytes(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return b.array();
    }

    public static float[] fromBytes(byte[] bytes) {
        if (bytes.length % Float.BYTES != 0) {
            throw new IllegalArgumentException("vector bytes not a multiple of 4: " + bytes.length);
        }
        float[] v = new float[bytes.length / Float.BYTES];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v);
        return v;
    }

    public static final class Serializer extends JsonSerializer<float[]> {
        @Override
        public void serialize(float[] value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeString(Base64.getEncoder().encodeToString(toBytes(value)));
        }
    }

    public static final class Deserializer extends JsonDeserializer<float[]> {
        @Override
        public float[] deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.currentToken() != JsonToken.VALUE_STRING) {
                return (float[]) ctxt.handleUnexpectedToken(float[].class, p);
            }
            try {
                return fromBytes(Base64.getDecoder().decode(p.getText()));
            } catch (IllegalArgumentException e) {
                throw ctxt.weirdStringException(p.getText(), float[].class, "not a base64 float32 vector");
            }
        }
    }
}
