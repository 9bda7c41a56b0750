package dev.engram.stores;

import dev.engram.schemas.Embeddings;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Vectors at rest in the state stores, in IEEE half precision: half the bytes of float32, and an error per value of at
 * most 2<sup>-11</sup> of it (2<sup>-25</sup> absolute below 2<sup>-14</sup>), far below what tells two texts apart
 * (the int8 embedders' own quantization moves a vector by more). A vector half precision cannot hold is kept in
 * float32: a value beyond ±65504 or not finite, or a vector whose values are all below 2<sup>-14</sup> (its scale,
 * not its direction, would be lost).
 *
 * <p>The memory step {@linkplain #round rounds} every vector it receives to the precision it will be stored in before
 * it uses it, so what it computes from a vector (similarities, locality-sensitive hashes, the mirrors' copies) is the
 * same whether the vector came from the understanding or was read back from a store, and a stored vector reads back
 * bit for bit. Vectors stored in float32 by earlier versions are rounded as they are read, so that a read returns
 * what a write of the same vector would store.
 *
 * <p>Single vectors are stored as a marker byte and little-endian half-precision values (an odd length), or as
 * little-endian float32 values (a multiple of four: how every vector was stored before), which are still read.
 */
public final class StoredVectors {

    /** Leads a half-precision vector; with it the length is odd, which a float32 vector's never is. */
    static final byte HALF = (byte) 0xF2;

    private static final float HALF_MAX = 65504f;
    /** The smallest normal half-precision value: below it, values keep fewer bits. */
    private static final float HALF_MIN_NORMAL = 0x1p-14f;

    private StoredVectors() {}

    /**
     * True when every value of {@code v} is finite and within half precision's range, and the largest is a normal
     * half-precision value (or the vector is all zeros).
     */
    static boolean fitsHalf(float[] v) {
        float largest = 0;
        for (float x : v) {
            if (!(Math.abs(x) <= HALF_MAX)) { // also false for NaN
                return false;
            }
            largest = Math.max(largest, Math.abs(x));
        }
        return largest == 0 || largest >= HALF_MIN_NORMAL;
    }

    /** {@code v} at the precision it is stored in: a new array, or {@code v} itself when it is kept in float32. */
    public static float[] round(float[] v) {
        if (v == null || !fitsHalf(v)) {
            return v;
        }
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = Float.float16ToFloat(Float.floatToFloat16(v[i]));
        }
        return out;
    }

    /** Every vector of {@code e} {@linkplain #round(float[]) rounded}. */
    public static Embeddings round(Embeddings e) {
        if (e == null) {
            return null;
        }
        return new Embeddings(
                round(e.passage()), round(e.memory()), round(e.entities()), round(e.facts()), round(e.questions()));
    }

    private static List<float[]> round(List<float[]> vectors) {
        return vectors.stream().map(StoredVectors::round).toList();
    }

    /** The stored bytes of one vector. */
    public static byte[] encode(float[] v) {
        if (!fitsHalf(v)) {
            ByteBuffer b = ByteBuffer.allocate(v.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            b.asFloatBuffer().put(v);
            return b.array();
        }
        ByteBuffer b = ByteBuffer.allocate(1 + v.length * Short.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put(HALF);
        for (float x : v) {
            b.putShort(Float.floatToFloat16(x));
        }
        return b.array();
    }

    /** The vector of stored bytes, in either format, at the precision a write of it would store. */
    public static float[] decode(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.length % 2 == 1 && bytes[0] == HALF) {
            in.position(1);
            return halves(in, (bytes.length - 1) / 2);
        }
        if (bytes.length % Float.BYTES != 0) {
            throw new IllegalArgumentException("not a stored vector: " + bytes.length + " bytes");
        }
        float[] v = new float[bytes.length / Float.BYTES];
        in.asFloatBuffer().get(v);
        return round(v);
    }

    /** Reads {@code n} half-precision values from {@code in}. */
    static float[] halves(ByteBuffer in, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = Float.float16ToFloat(in.getShort());
        }
        return v;
    }
}
