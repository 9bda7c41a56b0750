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

    /**
     * Reads the number at {@code at[0]} and moves {@code at[0]} past it.
     *
     * @throws IllegalArgumentException when the input ends inside it or it is longer than an int's five bytes
     */
    static int get(byte[] in, int[] at) {
        int v = 0;
        int shift = 0;
        byte b;
        do {
            if (at[0] >= in.length || shift > 28) {
                throw new IllegalArgumentException("a number cut short at byte " + at[0]);
            }
            b = in[at[0]++];
            v |= (b & 0x7f) << shift;
            shift += 7;
        } while (b < 0);
        return v;
    }
}
