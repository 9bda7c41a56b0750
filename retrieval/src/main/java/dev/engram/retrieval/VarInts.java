package dev.engram.retrieval;

/** Non-negative ints in seven-bit groups, lowest first, the high bit set on all but the last: small ones in a byte. */
final class VarInts {

    private VarInts() {}

    /** How many bytes {@code v} takes. */
    static int width(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("a negative value: " + v);
        }
        return v < (1 << 7) ? 1 : v < (1 << 14) ? 2 : v < (1 << 21) ? 3 : v < (1 << 28) ? 4 : 5;
    }

    /** Writes {@code v} at {@code at}; returns the position after it. */
    static int put(byte[] out, int at, int v) {
        if (v < 0) {
            throw new IllegalArgumentException("a negative value: " + v);
        }
        while ((v & ~0x7f) != 0) {
            out[at++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }
}
