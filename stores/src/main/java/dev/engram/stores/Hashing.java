package dev.engram.stores;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 content hashes and the ids derived from them. */
public final class Hashing {

    private Hashing() {}

    public static String sha256Hex(String text) {
        return HexFormat.of().formatHex(digest(text));
    }

    /** A 128-bit id (32 hex digits) derived from the given parts. */
    public static String id(String... parts) {
        return HexFormat.of().formatHex(digest(String.join("\u0000", parts)), 0, 16);
    }

    private static byte[] digest(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
