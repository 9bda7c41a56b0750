package dev.engram.retrieval;

/** Vectors for tests of the query side. */
final class TestVectors {

    private TestVectors() {}

    /** {@code v} scaled to unit length. */
    static float[] unit(float... v) {
        double n = 0;
        for (float x : v) {
            n += x * x;
        }
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] / Math.sqrt(n));
        }
        return out;
    }
}
