package dev.engram.schemas;

import java.util.ArrayList;
import java.util.List;

/**
 * Unicode folding of names and words by the JDK's own character tables, in one pass: what {@code \p{L}}, {@code
 * \p{N}} and {@code \p{M}} mean to the JDK's regular expressions, whatever Unicode version the JDK has, in time linear in the
 * text. Keys of the stores are made with these, so a name keys alike wherever it is folded.
 */
public final class UnicodeText {

    private UnicodeText() {}

    /** A letter ({@code \p{L}}) or a number ({@code \p{N}}). */
    public static boolean letterOrNumber(int cp) {
        return Character.isLetter(cp) || number(cp);
    }

    /** A number ({@code \p{N}}): a digit, a letter number, another number. */
    public static boolean number(int cp) {
        int type = Character.getType(cp);
        return type == Character.DECIMAL_DIGIT_NUMBER
                || type == Character.LETTER_NUMBER
                || type == Character.OTHER_NUMBER;
    }

    /** White space as the JDK's {@code \s} has it: space, tab, line feed, vertical tab, form feed, carriage return. */
    public static boolean space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r';
    }

    /** A combining mark ({@code \p{M}}). */
    public static boolean mark(int cp) {
        int type = Character.getType(cp);
        return type == Character.NON_SPACING_MARK
                || type == Character.ENCLOSING_MARK
                || type == Character.COMBINING_SPACING_MARK;
    }

    /** {@code text} without its combining marks. */
    public static String withoutMarks(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().filter(cp -> !mark(cp)).forEach(out::appendCodePoint);
        return out.toString();
    }

    /** {@code text} with every run of characters that are neither letters nor numbers replaced by one space. */
    public static String spacedWords(String text) {
        StringBuilder out = new StringBuilder(text.length());
        boolean gap = false;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (letterOrNumber(cp)) {
                out.appendCodePoint(cp);
                gap = false;
            } else if (!gap) {
                out.append(' ');
                gap = true;
            }
        }
        return out.toString();
    }

    /**
     * The words of {@code text} between runs of characters that are neither letters nor numbers, as {@code
     * String.split} gives them: an empty first word when the text starts with such a run, none at the end.
     */
    public static List<String> words(String text) {
        List<String> out = new ArrayList<>();
        int start = 0;
        boolean split = false;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (letterOrNumber(cp)) {
                i += Character.charCount(cp);
                continue;
            }
            int end = i;
            while (i < text.length() && !letterOrNumber(text.codePointAt(i))) {
                i += Character.charCount(text.codePointAt(i));
            }
            out.add(text.substring(start, end));
            start = i;
            split = true;
        }
        out.add(text.substring(start));
        while (split && !out.isEmpty() && out.get(out.size() - 1).isEmpty()) {
            out.remove(out.size() - 1);
        }
        return out;
    }
}
