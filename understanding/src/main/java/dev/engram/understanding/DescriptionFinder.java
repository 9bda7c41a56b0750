package dev.engram.understanding;

import static dev.engram.understanding.RuleTokens.OPENING_QUOTES;
import static dev.engram.understanding.RuleTokens.isBe;
import static dev.engram.understanding.RuleTokens.lower;
import static dev.engram.understanding.RuleTokens.skipParenthetical;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.engram.schemas.EntityType;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads copular and appositive descriptions ("X is an English mathematician", "X, a Y,"): the subject's
 * description and class noun, a concept mention for the noun, and the copula that links them.
 */
final class DescriptionFinder {

    /** A run of digits: a year when it is four of them, 1000-2099 ("(1432 – 1492)", "(born 11 June 1936)"). */
    private static final Pattern DIGITS = Pattern.compile("\\d+");

    private static final Set<String> CLOSING_QUOTES = Set.of("\"", "”", "''", "’");

    /** Words that open an aside renaming its subject: "born", "née", "also known as", "formerly", "nicknamed". */
    private static final Set<String> ASIDE_WORDS =
            Set.of("born", "née", "nee", "also", "known", "as", "formerly", "officially", "nicknamed", "called");

    private static final int MAX_ASIDE = 25;

    private final PassageState state;

    DescriptionFinder(PassageState state) {
        this.state = state;
    }

    /** "X is/was a Y" and "X, a Y," give X a description and a class noun (a concept entity). */
    void findDescriptions(int s) {
        List<Token> tokens = state.sentences.get(s).tokens();
        for (Mention m : state.mentionsIn(s)) {
            if (m.type == EntityType.DATE || m.type == EntityType.NUMBER) {
                continue;
            }
            int i = m.lastToken + 1;
            // "X (1860–1907) (born Y) is", "\"X\" is": past parentheticals and the subject's closing quote; the
            // years of those asides (a life's, a work's) tell the subject from a namesake, so they join its
            // description
            Set<String> asideYears = new LinkedHashSet<>();
            for (int before = -1; before != i; ) {
                before = i;
                int after = skipParenthetical(tokens, i);
                years(tokens, i, after, asideYears);
                i = after;
                if (i < tokens.size() && CLOSING_QUOTES.contains(tokens.get(i).text())) {
                    i++;
                }
            }
            // "X, born Y (…), was a", "X, also known as \"Y\", is a", "X, Countess of Essex (…), was the"
            int afterAside = copulaAfterAside(tokens, i);
            if (afterAside >= 0) {
                years(tokens, i, afterAside, asideYears); // "X, born Y (15 August 1955), is"
                i = afterAside;
            }
            boolean copular = i < tokens.size() && isBe(tokens.get(i));
            boolean appositive = i < tokens.size() && tokens.get(i).text().equals(",");
            if (!copular && !appositive) {
                continue;
            }
            int np = i + 1;
            if (np >= tokens.size() || !isArticle(tokens.get(np))) {
                if (copular && !asideYears.isEmpty()) {
                    // "X (12 May 1879 – 26 August 1945) was born at": no class noun, but the life's years
                    state.descriptions.putIfAbsent(m, "(" + String.join("–", asideYears) + ")");
                }
                continue;
            }
            int end = np + 1;
            int lastNoun = -1;
            while (end < tokens.size() && end - np <= 12) {
                Token t = tokens.get(end);
                if (t.is("ADJ")
                        || t.is("NOUN")
                        || t.is("PROPN")
                        || t.is("NUM")
                        || t.text().equals("-")) {
                    if (t.is("NOUN")) {
                        lastNoun = end;
                    }
                    end++;
                } else if (t.is("ADP") && lower(t).equals("of") && lastNoun >= 0) {
                    end++;
                } else {
                    break;
                }
            }
            if (lastNoun < 0) {
                continue;
            }
            int descEnd = end - 1;
            while (descEnd > np && !isContent(tokens.get(descEnd))) {
                descEnd--;
            }
            String description = state.text
                    .substring(tokens.get(np + 1).start(), tokens.get(descEnd).end())
                    .strip();
            if (!asideYears.isEmpty()) {
                description += " (" + String.join("–", asideYears) + ")";
            }
            int conceptFirst = np + 1;
            while (conceptFirst < lastNoun
                    && (tokens.get(conceptFirst).is("NUM") || state.overlapsMention(s, conceptFirst, conceptFirst))) {
                conceptFirst++; // "a 2016 French comedy film": the year is its own entity
            }
            int conceptLast = lastNoun;
            for (int t = np + 1; t <= lastNoun; t++) {
                if (tokens.get(t).is("ADP")) {
                    conceptLast = t - 1;
                    break;
                }
            }
            while (conceptLast >= conceptFirst && !tokens.get(conceptLast).is("NOUN")) {
                conceptLast--;
            }
            if (conceptLast < conceptFirst || state.overlapsMention(s, conceptFirst, conceptLast)) {
                continue;
            }
            int cStart = tokens.get(conceptFirst).start();
            int cEnd = tokens.get(conceptLast).end();
            Mention concept = new Mention(
                    state.text.substring(cStart, cEnd), cStart, cEnd, EntityType.CONCEPT, s, conceptFirst, conceptLast);
            state.mentions.add(concept);
            state.mentions.sort(Comparator.comparingInt((Mention x) -> x.start));
            state.descriptions.put(m, description);
            state.classNouns.put(m, lower(tokens.get(conceptLast)));
            state.copulas.add(new Copula(m, concept, copular ? lower(tokens.get(i)) : "is"));
        }
    }

    /**
     * The copula after an aside that renames or titles the subject ({@code , born …}, {@code , also known as …},
     * {@code , Countess of Essex}): names, nouns, dates and commas only, at most {@link #MAX_ASIDE} tokens; -1 when
     * {@code i} starts no such aside. A list ({@code X, Y and Z are}) or a clause is no aside.
     */
    private int copulaAfterAside(List<Token> tokens, int i) {
        if (i >= tokens.size() || !tokens.get(i).text().equals(",")) {
            return -1;
        }
        int j = i + 1;
        while (j < tokens.size() && j - i <= MAX_ASIDE) {
            Token t = tokens.get(j);
            if (t.text().equals("(")) {
                int next = skipParenthetical(tokens, j);
                if (next == j) {
                    return -1;
                }
                j = next;
                continue;
            }
            if (isBe(t)) {
                return j; // "X, is a" too: a stray comma before the copula
            }
            boolean name = t.is("PROPN") || t.is("NOUN") || t.is("ADJ") || t.is("NUM") || t.is("DET");
            boolean linking = t.is("ADP")
                    || t.text().equals(",")
                    || t.text().equals(".") // "X, Op. 70, is": an abbreviation, the sentence goes on
                    || t.text().equals("-")
                    || CLOSING_QUOTES.contains(t.text())
                    || OPENING_QUOTES.contains(t.text());
            if (!name && !linking && !ASIDE_WORDS.contains(lower(t))) {
                return -1;
            }
            j++;
        }
        return -1;
    }

    /** The years named by tokens {@code from} to {@code to} (exclusive), in order ("1860–1907" names two). */
    private static void years(List<Token> tokens, int from, int to, Set<String> out) {
        for (int t = from; t < to; t++) {
            Matcher y = DIGITS.matcher(tokens.get(t).text());
            while (y.find()) {
                String digits = y.group();
                if (digits.length() == 4 && (digits.charAt(0) == '1' || digits.startsWith("20"))) {
                    out.add(digits);
                }
            }
        }
    }

    private static boolean isArticle(Token t) {
        return Set.of("a", "an", "the").contains(lower(t));
    }

    private static boolean isContent(Token t) {
        return t.is("NOUN") || t.is("PROPN") || t.is("ADJ") || t.is("NUM");
    }
}
