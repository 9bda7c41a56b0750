package dev.engram.understanding;

/** Unit-length vectors, as every Engram embedding is. */
public final class VectorMath {

    private VectorMath() {}

    /** Scales {@code v} to unit length in place (a zero vector stays zero) and returns it. */
    public static float[] normalize(float[] v) {
        double norm = 0;
        for (float x : v) {
            norm += (double) x * x;
        }
        float inv = norm == 0 ? 0f : (float) (1 / Math.sqrt(norm));
        for (int i = 0; i < v.length; i++) {
            v[i] *= inv;
        }
        return v;
    }
}
