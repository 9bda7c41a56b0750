package dev.engram.retrieval;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import java.util.List;
import java.util.Locale;

/**
 * The rule-based split used without an LLM: a comparison question whose alternatives are joined by "or" ("Which
 * film came out first, Agni or Arrête ton cinéma?") becomes one sub-query per alternative.
 */
public final class QueryDecomposition {

    /** White space as Java's {@code \s} has it (RE2/J's leaves out the vertical tab). */
    private static final String SPACE = "[\\t\\n\\x0B\\f\\r ]";

    private static final Pattern ALTERNATIVES = Pattern.compile(
            "^(.*?)[,:]?" + SPACE + "*([^,:]+?)" + SPACE + "+or" + SPACE + "+([^,:?]+?)" + SPACE + "*\\??" + SPACE
                    + "*$",
            Pattern.DOTALL);
    private static final List<String> CUES = List.of(
            "which", "who", "first", "earlier", "later", "older", "younger", "more", "less", "larger", "smaller",
            "longer", "shorter", "higher", "lower", "both", "same", "either", "before", "after", "born", "died");

    private QueryDecomposition() {}

    /** Sub-queries, or an empty list when the question is not a comparison of alternatives. */
    public static List<String> split(String question) {
        String lower = question.toLowerCase(Locale.ROOT);
        if (!lower.contains(" or ") || CUES.stream().noneMatch(lower::contains)) {
            return List.of();
        }
        Matcher m = ALTERNATIVES.matcher(question.strip());
        if (!m.matches()) {
            return List.of();
        }
        String stem = m.group(1).strip();
        String a = m.group(2).strip();
        String b = m.group(3).strip();
        if (a.isEmpty() || b.isEmpty() || stem.isEmpty()) {
            return List.of();
        }
        return List.of(stem + " " + a + "?", stem + " " + b + "?");
    }
}
