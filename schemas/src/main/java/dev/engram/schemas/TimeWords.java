package dev.engram.schemas;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The words that time expressions are read from, shared by what resolves them in passages and what reads them in
 * questions: a linear scan into lower-cased words with their offsets, the small counts written as words, and the
 * digits test. No regular expression: each character is looked at once.
 */
public final class TimeWords {

    private TimeWords() {}

    /** A word: lower-cased, and its {@code [start, end)} in the text. */
    public record Word(String lower, int start, int end) {}

    /** "a", "an" and "one" to "twelve" as numbers. */
    public static final Map<String, Integer> COUNTS = Map.ofEntries(
            Map.entry("a", 1),
            Map.entry("an", 1),
            Map.entry("one", 1),
            Map.entry("two", 2),
            Map.entry("three", 3),
            Map.entry("four", 4),
            Map.entry("five", 5),
            Map.entry("six", 6),
            Map.entry("seven", 7),
            Map.entry("eight", 8),
            Map.entry("nine", 9),
            Map.entry("ten", 10),
            Map.entry("eleven", 11),
            Map.entry("twelve", 12));

    /**
     * The words of {@code text}: runs of letters and digits. With {@code joined}, a run goes on through an apostrophe
     * or hyphen followed by a letter or digit ("yesterday's", "last-minute" are one word each, so neither reads as the
     * expression it starts with).
     */
    public static List<Word> words(String text, boolean joined) {
        List<Word> out = new ArrayList<>();
        int i = 0;
        int n = text.length();
        while (i < n) {
            if (!Character.isLetterOrDigit(text.charAt(i))) {
                i++;
                continue;
            }
            int start = i;
            while (i < n) {
                char c = text.charAt(i);
                if (Character.isLetterOrDigit(c)) {
                    i++;
                } else if (joined
                        && (c == '-' || c == '\'' || c == '’')
                        && i + 1 < n
                        && Character.isLetterOrDigit(text.charAt(i + 1))) {
                    i += 2;
                } else {
                    break;
                }
            }
            out.add(new Word(text.substring(start, i).toLowerCase(Locale.ROOT), start, i));
        }
        return out;
    }

    /** The word at {@code i}, or "" past the end. */
    public static String word(List<Word> words, int i) {
        return i < words.size() ? words.get(i).lower() : "";
    }

    /** Whether {@code w} is ASCII digits only (and not empty). */
    public static boolean digits(String w) {
        for (int k = 0; k < w.length(); k++) {
            if (w.charAt(k) < '0' || w.charAt(k) > '9') {
                return false;
            }
        }
        return !w.isEmpty();
    }
}
