package dev.engram.understanding;

import dev.engram.schemas.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        List<Span> out =
                find(text, Pattern.compile("(?<![\\p{L}\\p{N}])" + Pattern.quote(needle) + "(?![\\p{L}\\p{N}])"));
        if (out.isEmpty()) {
            out = find(
                    text,
                    Pattern.compile(
                            "(?<![\\p{L}\\p{N}])" + Pattern.quote(needle) + "(?![\\p{L}\\p{N}])",
                            Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE));
        }
        return out;
    }

    private static List<Span> find(String text, Pattern p) {
        List<Span> out = new ArrayList<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(new Span(m.start(), m.end()));
        }
        return out;
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
        String[] words = q.split("\\s+");
        StringBuilder regex = new StringBuilder();
        for (String w : words) {
            if (!regex.isEmpty()) {
                regex.append("\\s+");
            }
            regex.append(Pattern.quote(w));
        }
        Matcher m = Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)
                .matcher(text);
        return m.find() ? new Span(m.start(), m.end()) : null;
    }
}
