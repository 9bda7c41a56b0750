package dev.engram.understanding;

import dev.engram.schemas.EntityType;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Token tests and text patterns that several phases of the rule extractor share. */
final class RuleTokens {

    /** White space as Java's {@code \s} has it (RE2/J's leaves out the vertical tab). */
    static final String SPACE = "[\\t\\n\\x0B\\f\\r ]";

    static final Set<String> OPENING_QUOTES = Set.of("\"", "“", "``", "‘");

    private RuleTokens() {}

    static boolean isBe(Token t) {
        return Set.of("is", "was", "are", "were").contains(lower(t)) && (t.is("AUX") || t.is("VERB"));
    }

    static String lower(Token t) {
        return t.text().toLowerCase(Locale.ROOT);
    }

    static boolean isValue(EntityType t) {
        return t == EntityType.DATE || t == EntityType.NUMBER;
    }

    static boolean capitalized(Token t) {
        return capitalized(t.text());
    }

    static boolean capitalized(String w) {
        return !w.isEmpty() && Character.isUpperCase(w.codePointAt(0));
    }

    /** The token after the parenthetical that opens at {@code i}; {@code i} when none does. */
    static int skipParenthetical(List<Token> tokens, int i) {
        if (i < tokens.size() && tokens.get(i).text().equals("(")) {
            int depth = 0;
            for (int t = i; t < tokens.size(); t++) {
                if (tokens.get(t).text().equals("(")) {
                    depth++;
                } else if (tokens.get(t).text().equals(")") && --depth == 0) {
                    return t + 1;
                }
            }
        }
        return i;
    }
}
