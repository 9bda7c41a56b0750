package dev.engram.schemas;

import java.text.Normalizer;
import java.util.Locale;

/**
 * The normalized form of entity names (case, diacritics, punctuation, a leading article ignored): what makes mentions
 * one surface entity in the stores, and how the query side matches a name to a document's title. One definition, so
 * that both always agree.
 */
public final class NormalizedNames {

    private NormalizedNames() {}

    /**
     * A name's normalized form: compatibility decomposition, marks dropped, lower case, every run of characters that
     * are neither letters nor numbers one space (none at either end), a leading article dropped unless it is the whole
     * name ("The Gödel–Escher, Bach" is "godel escher bach").
     */
    public static String of(String name) {
        String ascii = ascii(name);
        return ascii != null ? ascii : unicode(name);
    }

    /**
     * {@link #of} of a name of ASCII characters only, in one pass without a regular expression (names are
     * normalized for every mention a snapshot or the memory step reads); null for any other name.
     */
    static String ascii(String name) {
        StringBuilder out = new StringBuilder(name.length());
        boolean gap = false;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 0x80) {
                return null;
            }
            boolean word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (c >= 'A' && c <= 'Z') {
                c = (char) (c + ('a' - 'A'));
                word = true;
            }
            if (!word) {
                gap = true; // a run of anything else is one space, none at either end
            } else {
                if (gap && !out.isEmpty()) {
                    out.append(' ');
                }
                gap = false;
                out.append(c);
            }
        }
        String s = out.toString();
        for (String article : ARTICLES) {
            if (s.startsWith(article) && s.length() > article.length()) {
                return s.substring(article.length());
            }
        }
        return s;
    }

    private static final String[] ARTICLES = {"the ", "a ", "an "};

    /** Compatibility decomposition, marks dropped, then as {@link #ascii}. */
    static String unicode(String name) {
        String s = UnicodeText.withoutMarks(Normalizer.normalize(name, Normalizer.Form.NFKD));
        s = UnicodeText.spacedWords(s.toLowerCase(Locale.ROOT)).strip();
        for (String article : ARTICLES) {
            if (s.startsWith(article)) {
                String without = s.substring(article.length());
                return without.isEmpty() ? s : without;
            }
        }
        return s;
    }
}
