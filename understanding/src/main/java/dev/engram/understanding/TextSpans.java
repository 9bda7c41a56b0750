package dev.engram.understanding;

import dev.engram.schemas.Span;
import dev.engram.schemas.UnicodeText;
import java.util.ArrayList;
import java.util.List;

/** Where names and quotes stand in a passage's text: the spans extractors give as evidence. */
public final class TextSpans {

    private TextSpans() {}

    /** Distinct spans in text order, without those inside a longer one ("Babbage" within "Charles Babbage"). */
    public static List<Span> outermost(List<Span> spans) {
        List<Span> out = new ArrayList<>();
        for (Span s : spans) {
            boolean inside = spans.stream().anyMatch(o -> !o.equals(s) && o.start() <= s.start() && s.end() <= o.end());
            if (!inside && !out.contains(s)) {
                out.add(s);
            }
        }
        out.sort((a, b) -> Integer.compare(a.start(), b.start()));
        return out;
    }

    /** Every occurrence of {@code needle} as a whole word; case-insensitive when there is no exact one. */
    public static List<Span> occurrences(String text, String needle) {
        List<Span> out = find(text, needle, false);
        return out.isEmpty() ? find(text, needle, true) : out;
    }

    /**
     * The occurrences of {@code needle} in {@code text}, left to right and not overlapping, that no letter or digit
     * adjoins: at most one comparison of the needle per position of the text.
     */
    private static List<Span> find(String text, String needle, boolean ignoreCase) {
        List<Span> out = new ArrayList<>();
        int n = needle.length();
        if (n == 0) {
            return out;
        }
        for (int i = 0; i + n <= text.length(); ) {
            int at = ignoreCase ? indexOfIgnoringCase(text, needle, i) : text.indexOf(needle, i);
            if (at < 0) {
                break;
            }
            if (!wordAt(text, at, true) && !wordAt(text, at + n, false)) {
                out.add(new Span(at, at + n));
                i = at + n;
            } else {
                i = at + 1;
            }
        }
        return out;
    }

    private static int indexOfIgnoringCase(String text, String needle, int from) {
        for (int i = from; i + needle.length() <= text.length(); i++) {
            if (text.regionMatches(true, i, needle, 0, needle.length())) {
                return i;
            }
        }
        return -1;
    }

    /** Whether a letter or digit stands just before ({@code before}) or at {@code i}. */
    private static boolean wordAt(String text, int i, boolean before) {
        if (before ? i == 0 : i >= text.length()) {
            return false;
        }
        int cp = before ? text.codePointBefore(i) : text.codePointAt(i);
        return UnicodeText.letterOrNumber(cp);
    }

    /** Where an evidence quote stands in the passage, tolerant of case and whitespace; null if it does not. */
    public static Span locate(String text, String quote) {
        String q = quote == null ? "" : quote.strip();
        if (q.isEmpty()) {
            return null;
        }
        int exact = text.indexOf(q);
        if (exact >= 0) {
            return new Span(exact, exact + q.length());
        }
        List<String> words = new ArrayList<>();
        for (int i = 0; i < q.length(); ) {
            int end = i;
            while (end < q.length() && !UnicodeText.space(q.charAt(end))) {
                end++;
            }
            words.add(q.substring(i, end));
            i = end;
            while (i < q.length() && UnicodeText.space(q.charAt(i))) {
                i++;
            }
        }
        for (int start = 0; start < text.length(); start++) {
            int end = wordsAt(text, start, words);
            if (end >= 0) {
                return new Span(start, end);
            }
        }
        return null;
    }

    /** Where {@code words} end when they stand at {@code at}, case aside and white space between them; else -1. */
    private static int wordsAt(String text, int at, List<String> words) {
        int i = at;
        for (int k = 0; k < words.size(); k++) {
            String w = words.get(k);
            if (!text.regionMatches(true, i, w, 0, w.length())) {
                return -1;
            }
            i += w.length();
            if (k < words.size() - 1) {
                int gap = i;
                while (i < text.length() && UnicodeText.space(text.charAt(i))) {
                    i++;
                }
                if (i == gap) {
                    return -1;
                }
            }
        }
        return i;
    }
}
