package dev.engram.stores;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.JsonSerde;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The memory's embeddings in binary: a version byte, then each vector as its number of values, the width of a value
 * (2: half precision, see {@link StoredVectors}; 4: float32, for a vector half precision cannot hold) and the
 * little-endian values; lists as their size and vectors. Every query snapshot reads every passage's embeddings, where
 * base64-in-JSON cost a quarter of the build. Values stored by earlier versions are still read, and their vectors
 * {@linkplain StoredVectors#round rounded} as a write would store them: all float32 (version byte {@code 0xE1}), or
 * JSON (they start with '{').
 */
public final class EmbeddingsSerde implements Serde<Embeddings> {

    /** Values of the vectors in float32, written by earlier versions. */
    private static final byte FLOAT32 = (byte) 0xE1;
    /** Each vector's values in half precision, or float32 where they do not fit, with the width before them. */
    private static final byte VERSION = (byte) 0xE2;

    private static final Serde<Embeddings> JSON = JsonSerde.of(Embeddings.class);

    @Override
    public Serializer<Embeddings> serializer() {
        return (topic, e) -> {
            if (e == null) {
                return null;
            }
            int size = 1 + vectorSize(e.passage()) + vectorSize(e.memory());
            for (List<float[]> list : List.of(e.entities(), e.facts(), e.questions())) {
                size += 4;
                for (float[] v : list) {
                    size += vectorSize(v);
                }
            }
            ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
            out.put(VERSION);
            put(out, e.passage());
            put(out, e.memory());
            for (List<float[]> list : List.of(e.entities(), e.facts(), e.questions())) {
                out.putInt(list.size());
                list.forEach(v -> put(out, v));
            }
            return out.array();
        };
    }

    @Override
    public Deserializer<Embeddings> deserializer() {
        Deserializer<Embeddings> json = JSON.deserializer();
        return (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            if (bytes.length > 0 && bytes[0] == '{') {
                return StoredVectors.round(json.deserialize(topic, bytes));
            }
            if (bytes.length == 0 || (bytes[0] != VERSION && bytes[0] != FLOAT32)) {
                throw new SerializationException("embeddings in " + topic + ": unknown format");
            }
            boolean widths = bytes[0] == VERSION;
            ByteBuffer in = ByteBuffer.wrap(bytes, 1, bytes.length - 1).order(ByteOrder.LITTLE_ENDIAN);
            try {
                float[] passage = vector(in, widths);
                float[] memory = vector(in, widths);
                List<float[]> entities = list(in, widths);
                List<float[]> facts = list(in, widths);
                List<float[]> questions = list(in, widths);
                if (in.hasRemaining()) {
                    throw new SerializationException(
                            "embeddings in " + topic + ": " + in.remaining() + " bytes too many");
                }
                Embeddings e = new Embeddings(passage, memory, entities, facts, questions);
                return widths ? e : StoredVectors.round(e);
            } catch (BufferUnderflowException | IllegalArgumentException e) {
                throw new SerializationException("embeddings in " + topic + ": truncated or corrupt", e);
            }
        };
    }

    private static int vectorSize(float[] v) {
        return 4 + (v == null ? 0 : 1 + (StoredVectors.fitsHalf(v) ? 2 : 4) * v.length);
    }

    private static void put(ByteBuffer out, float[] v) {
        if (v == null) {
            out.putInt(-1);
            return;
        }
        out.putInt(v.length);
        if (StoredVectors.fitsHalf(v)) {
            out.put((byte) 2);
            for (float x : v) {
                out.putShort(Float.floatToFloat16(x));
            }
        } else {
            out.put((byte) 4);
            out.asFloatBuffer().put(v);
            out.position(out.position() + 4 * v.length);
        }
    }

    /** A vector: with {@code widths}, each vector says the width of its values; else they are float32. */
    private static float[] vector(ByteBuffer in, boolean widths) {
        int n = in.getInt();
        if (n == -1) {
            return null;
        }
        int width = widths ? in.get() : 4;
        if (n < 0 || (width != 2 && width != 4) || (long) width * n > in.remaining()) {
            throw new IllegalArgumentException("vector of " + n + " values of " + width + " bytes");
        }
        if (width == 2) {
            return StoredVectors.halves(in, n);
        }
        float[] v = new float[n];
        in.asFloatBuffer().get(v);
        in.position(in.position() + 4 * n);
        return v;
    }

    private static List<float[]> list(ByteBuffer in, boolean widths) {
        int n = in.getInt();
        if (n < 0 || 4L * n > in.remaining()) {
            throw new IllegalArgumentException("list of " + n + " vectors");
        }
        List<float[]> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            float[] v = vector(in, widths);
            if (v == null) {
                throw new IllegalArgumentException("a list holds no vector at " + i);
            }
            out.add(v);
        }
        return out;
    }
}
