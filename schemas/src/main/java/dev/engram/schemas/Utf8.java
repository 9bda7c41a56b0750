package dev.engram.schemas;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Strict UTF-8: bytes that are not UTF-8 (overlong forms, encoded surrogates, stray continuation bytes, truncated
 * sequences) are reported, never replaced by U+FFFD, so that two different inputs never decode to the same text.
 */
public final class Utf8 {

    private Utf8() {}

    /** The text of {@code bytes}, or empty when they are not UTF-8. */
    public static Optional<String> decode(byte[] bytes) {
        try {
            return Optional.of(StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    /** Whether {@code text} has a UTF-8 form: no unpaired surrogate (which would be written as {@code ?}). */
    public static boolean encodable(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }
}
