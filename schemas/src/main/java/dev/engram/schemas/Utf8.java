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

    /**
     * {@code text} when it has at most {@code max} chars; else as many of its first chars as leave room for {@code
     * ellipsis}, never the first half of a surrogate pair without its second (which no UTF-8 can write), then {@code
     * ellipsis}.
     */
    public static String abbreviate(String text, int max, String ellipsis) {
        if (text.length() <= max) {
            return text;
        }
        int end = Math.max(0, max - ellipsis.length());
        if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + ellipsis;
    }

    /**
     * {@code text} with each unpaired surrogate written as its escape ({@code \\uD800}): text that can be shown and
     * written, for a message that quotes what was refused for holding one.
     */
    public static String escapeUnpaired(String text) {
        if (encodable(text)) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 8);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
