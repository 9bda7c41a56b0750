package dev.engram.retrieval;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A list of strings (nulls allowed) as one array of bytes: the count, then each string's UTF-8 length + 1 (0 for null)
 * and its bytes, numbers in seven-bit groups. What a passage's texts are kept as in an arena.
 */
public final class PackedStrings {

    private PackedStrings() {}

    public static byte[] pack(List<String> strings) {
        byte[][] utf8 = new byte[strings.size()][];
        int size = VarInts.width(strings.size());
        for (int i = 0; i < utf8.length; i++) {
            String s = strings.get(i);
            utf8[i] = s == null ? null : s.getBytes(StandardCharsets.UTF_8);
            int n = utf8[i] == null ? 0 : utf8[i].length;
            size += VarInts.width(utf8[i] == null ? 0 : n + 1) + n;
        }
        byte[] out = new byte[size];
        int at = VarInts.put(out, 0, strings.size());
        for (byte[] b : utf8) {
            at = VarInts.put(out, at, b == null ? 0 : b.length + 1);
            if (b != null) {
                System.arraycopy(b, 0, out, at, b.length);
                at += b.length;
            }
        }
        return out;
    }

    public static List<String> unpack(byte[] packed) {
        int[] at = {0};
        int count = next(packed, at);
        List<String> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int n = next(packed, at);
            if (n == 0) {
                out.add(null);
            } else {
                if (n - 1 > packed.length - at[0]) {
                    throw new IllegalArgumentException("packed strings cut short: a string of " + (n - 1) + " bytes");
                }
                out.add(new String(packed, at[0], n - 1, StandardCharsets.UTF_8));
                at[0] += n - 1;
            }
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * The string at {@code index} alone (null for a null one), the ones before it skipped without being decoded.
     *
     * @throws IndexOutOfBoundsException when the list is shorter
     * @throws IllegalArgumentException when the bytes are cut short
     */
    public static String get(byte[] packed, int index) {
        int[] at = {0};
        int count = next(packed, at);
        if (index < 0 || index >= count) {
            throw new IndexOutOfBoundsException("string " + index + " of " + count);
        }
        for (int i = 0; ; i++) {
            int n = next(packed, at);
            if (n > 0 && n - 1 > packed.length - at[0]) {
                throw new IllegalArgumentException("packed strings cut short: a string of " + (n - 1) + " bytes");
            }
            if (i == index) {
                return n == 0 ? null : new String(packed, at[0], n - 1, StandardCharsets.UTF_8);
            }
            at[0] += Math.max(0, n - 1);
        }
    }

    private static int next(byte[] in, int[] at) {
        try {
            return VarInts.get(in, at);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("packed strings cut short: " + e.getMessage(), e);
        }
    }
}
