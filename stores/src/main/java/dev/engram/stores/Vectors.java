package dev.engram.stores;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Float vectors stored as little-endian float32 bytes. */
public final class Vectors {

    private Vectors() {}

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
}
