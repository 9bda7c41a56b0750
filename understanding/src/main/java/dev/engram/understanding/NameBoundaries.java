package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.ORGANIZATION_WORDS;
import static dev.engram.understanding.RuleTokens.capitalized;
import static dev.engram.understanding.RuleTokens.lower;

import com.google.re2j.Pattern;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Where a name starts, goes on and stops among a sentence's tokens, by their tags, case and spacing. */
final class NameBoundaries {

    static final Pattern NUMERAL = Pattern.compile("\\d[\\d,.]*");

    /**
     * Greetings and interjections that open a chat turn capitalized before a name ("Hey Jon!"), which a tagger may
     * read as part of it; no name starts with one.
     */
    private static final Set<String> INTERJECTIONS = Set.of(
            "hey",
            "hi",
            "hello",
            "hiya",
            "yo",
            "thanks",
            "congrats",
            "congratulations",
            "wow",
            "bye",
            "haha",
            "lol",
            "omg",
            "aww");

    private NameBoundaries() {}

    /**
     * A name starts at a proper noun, an acronym, capitalized adjectives that lead to a capitalized noun, a group's
     * possessive before a capital, or a capitalized noun that does not open its sentence.
     */
    static boolean startsName(List<Token> tokens, int i) {
        Token t = tokens.get(i);
        if (!capitalized(t) || t.is("INTJ") || INTERJECTIONS.contains(lower(t))) {
            return false; // "Hey Jon!", "Thanks Mel": the name is Jon, Mel
        }
        if (t.is("PROPN")) {
            return !t.text().equals("I");
        }
        if (acronym(t)) {
            return true; // "CNN", "BBC"
        }
        boolean sentenceInitial = i == 0 || isOpening(tokens.get(i - 1));
        if (t.is("ADJ") && !(sentenceInitial && QUANTIFIERS.contains(lower(t)))) {
            // "United States", "International Olympic Committee", "American International Pictures": capitalized
            // adjectives that lead to a capitalized noun; not "Many Americans", "Several British Army officers"
            int k = i + 1;
            while (k < tokens.size() && tokens.get(k).is("ADJ") && capitalized(tokens.get(k))) {
                k++;
            }
            if (k < tokens.size()
                    && capitalized(tokens.get(k))
                    && (tokens.get(k).is("PROPN")
                            || tokens.get(k).is("NOUN")
                            || tokens.get(k).is("X"))) {
                return true;
            }
        }
        if (collectivePossessive(t) && i + 1 < tokens.size() && capitalized(tokens.get(i + 1))) {
            return true; // "People's Republic of China", "Women's National Basketball League"
        }
        return !sentenceInitial && (t.is("NOUN") || t.is("X"));
    }

    /**
     * Inside a name, a capitalized word continues it, and so do a numeral ("Hut 8", "Apollo 11"), the initial's
     * period ("Gregory B. Penner"), a hyphen inside a name (see {@link #gluedHyphen}) and a group's possessive
     * before a capital; a capitalized possessive before a lower-case word ends it.
     */
    static boolean continuesName(List<Token> tokens, int i) {
        Token t = tokens.get(i);
        if (t.text().equals(".")
                && i > 0
                && i + 1 < tokens.size()
                && singleCapital(tokens.get(i - 1).text())
                && capitalized(tokens.get(i + 1))) {
            return true; // the initial in "Gregory B. Penner"
        }
        if (gluedHyphen(tokens, i)) {
            return true; // "Jean-Paul", "Stockholm-Arlanda Airport", "Kim Jong-un"
        }
        String previous = i == 0 ? "" : tokens.get(i - 1).text().replace('’', '\'');
        if ((previous.length() > 2 && previous.endsWith("'s") && !collectivePossessive(tokens.get(i - 1)))
                || (previous.length() > 1 && previous.endsWith("/"))) {
            return false; // "the AFC's Patriots", "the TBS/ OWN series": two names, not one
        }
        if (t.text().length() > 1 && t.text().startsWith("-") && glued(tokens, i - 1, i)) {
            // "Coca" "-Cola": the tokenizer kept the hyphen on; not "Israel" "-Hamas" "war"
            return capitalized(t.text().substring(1))
                    && !(i + 1 < tokens.size() && tokens.get(i + 1).is("NOUN") && !capitalized(tokens.get(i + 1)));
        }
        if (t.is("PUNCT") || t.text().equals("'s")) {
            return false;
        }
        if (t.is("PRON") && previous.endsWith(".")) {
            return false; // "in the U.S. She moved": a sentence the sentence model did not end
        }
        if (i >= 2 && gluedHyphen(tokens, i - 1)) {
            return true; // checked with the hyphen
        }
        if (collectivePossessive(t)) {
            return i + 1 < tokens.size() && capitalized(tokens.get(i + 1));
        }
        return capitalized(t) || (t.is("NUM") && NUMERAL.matcher(t.text()).matches());
    }

    /**
     * A hyphen between two parts of a name, with no space on either side, after a capitalized part: what follows
     * is capitalized ("Jean-Paul", "T-Mobile"), or — after a part of two letters or more — a short lower-case
     * syllable of a romanized name ("Jong-un", "Jong-il") that is no verb and no listed common word
     * ("Tudor-era", "Hong Kong-born"; "Paris-based" is too long to be one). A compound that modifies the noun
     * after it ("the Israel-Hamas war", "Israeli-Palestinian conflict") is no name.
     */
    private static boolean gluedHyphen(List<Token> tokens, int i) {
        if (i < 1 || i + 1 >= tokens.size() || !tokens.get(i).text().equals("-")) {
            return false;
        }
        Token before = tokens.get(i - 1);
        if (!glued(tokens, i - 1, i) || !glued(tokens, i, i + 1) || !capitalized(before)) {
            return false;
        }
        Token next = tokens.get(i + 1);
        boolean part = capitalized(next)
                || (before.text().length() >= 2
                        && next.text().length() <= 4
                        && next.text().chars().allMatch(Character::isLowerCase)
                        && !next.is("VERB")
                        && !NOT_NAME_SYLLABLES.contains(next.text()));
        boolean modifier = i + 2 < tokens.size() && tokens.get(i + 2).is("NOUN") && !capitalized(tokens.get(i + 2));
        return part && !modifier;
    }

    /** Possessives of a group of people that names of institutions begin with or hold ("People's Republic"). */
    private static final Set<String> COLLECTIVE_POSSESSIVES =
            Set.of("people's", "women's", "children's", "men's", "girls'", "boys'", "ladies'", "workers'", "veterans'");

    private static boolean collectivePossessive(Token t) {
        return capitalized(t)
                && COLLECTIVE_POSSESSIVES.contains(t.text().replace('’', '\'').toLowerCase(Locale.ROOT));
    }

    /**
     * "and" inside the name of an institution: the word before it names a domain an institution is for (a common
     * noun) and the capitalized words after it end in an organization word ("Mine Safety and Health
     * Administration", "Food and Drug Administration"), or the name opened with an organization word and "of"
     * and ends in a domain ("Academy of Motion Picture Arts and Sciences"); "France and Germany" stay two names.
     */
    static boolean andInInstitution(List<Token> tokens, int j) {
        if (!lower(tokens.get(j)).equals("and")
                || j < 1
                || !INSTITUTION_DOMAINS.contains(lower(tokens.get(j - 1)))
                || j + 1 >= tokens.size()
                || acronym(tokens.get(j + 1))) {
            return false; // "Harvard and Yale University", "Microsoft and IBM Corporation" stay apart
        }
        int k = j + 1;
        while (k < tokens.size() && capitalized(tokens.get(k)) && !tokens.get(k).is("PUNCT")) {
            k++;
        }
        if (k > j + 1 && ORGANIZATION_WORDS.contains(lower(tokens.get(k - 1)))) {
            return true;
        }
        // or the name opened with an organization word and "of", and the word after "and" is the last domain
        // ("Academy of Motion Picture Arts and Sciences", "Department of Agriculture and Fisheries")
        if (!INSTITUTION_DOMAINS.contains(lower(tokens.get(k - 1)))) {
            return false;
        }
        for (int b = j - 2; b >= 1; b--) {
            Token t = tokens.get(b);
            if (lower(t).equals("of")) {
                return ORGANIZATION_WORDS.contains(lower(tokens.get(b - 1))) && capitalized(tokens.get(b - 1));
            }
            if (!capitalized(t) || t.is("PUNCT")) {
                return false;
            }
        }
        return false;
    }

    /** Common nouns that name what an institution is for, before the "and" of its name. */
    private static final Set<String> INSTITUTION_DOMAINS = Set.of(
            "safety",
            "health",
            "food",
            "drug",
            "drugs",
            "arts",
            "science",
            "sciences",
            "trade",
            "industry",
            "education",
            "culture",
            "welfare",
            "research",
            "development",
            "agriculture",
            "fisheries",
            "commerce",
            "energy",
            "environment",
            "transport",
            "transportation",
            "housing",
            "labor",
            "labour",
            "defence",
            "defense",
            "security",
            "justice",
            "finance",
            "technology",
            "communications",
            "information",
            "immigration",
            "customs",
            "parks",
            "wildlife",
            "forestry",
            "mines",
            "mining",
            "land",
            "water",
            "power",
            "tourism",
            "sport",
            "sports",
            "youth",
            "family",
            "human",
            "services",
            "alcohol",
            "tobacco",
            "firearms");

    /** Quantifiers and the like that open a sentence before a capitalized adjective ("Many Americans"). */
    private static final Set<String> QUANTIFIERS = Set.of(
            "many",
            "several",
            "other",
            "most",
            "few",
            "some",
            "former",
            "recent",
            "early",
            "late",
            "various",
            "numerous",
            "certain",
            "both",
            "all",
            "each",
            "every",
            "such");

    /** Lower-case words that follow a name and a hyphen without being part of the name. */
    private static final Set<String> NOT_NAME_SYLLABLES = Set.of(
            "born", "led", "run", "era", "old", "made", "like", "wide", "free", "long", "type", "size", "year", "age",
            "day", "time", "week", "term", "line", "side", "area", "bred", "held", "only", "less", "fed", "set", "up",
            "in", "on", "off", "out", "to", "of", "and", "or", "the", "a", "an");

    private static boolean glued(List<Token> tokens, int a, int b) {
        return a >= 0
                && b < tokens.size()
                && tokens.get(a).end() == tokens.get(b).start();
    }

    /**
     * All adjectives ("American", "Soviet", "Anglo-French"): no name; an acronym the tagger took for one ("IMF")
     * is a name.
     */
    static boolean allAdjectives(List<Token> tokens, int first, int last) {
        for (int t = first; t <= last; t++) {
            Token token = tokens.get(t);
            if (token.text().equals("-")) {
                continue;
            }
            if (!token.is("ADJ") || acronym(token)) {
                return false;
            }
        }
        return true;
    }

    private static boolean acronym(Token t) {
        String word = withoutPossessive(t.text());
        return word.length() >= 2
                && word.chars().allMatch(c -> Character.isUpperCase(c) || Character.isDigit(c))
                && word.chars().anyMatch(Character::isUpperCase);
    }

    /** A word without the possessive the tokenizer left glued to it ("AIP's" → "AIP", "Jr.'s" → "Jr."). */
    static String withoutPossessive(String word) {
        return word.length() > 2 && (word.endsWith("'s") || word.endsWith("’s"))
                ? word.substring(0, word.length() - 2)
                : word;
    }

    private static boolean isOpening(Token t) {
        return t.is("PUNCT") && "\"“'‘([{:".contains(t.text());
    }

    /** One upper-case letter and nothing else ("B" in "Gregory B. Penner"). */
    private static boolean singleCapital(String text) {
        return !text.isEmpty()
                && text.length() == Character.charCount(text.codePointAt(0))
                && Character.getType(text.codePointAt(0)) == Character.UPPERCASE_LETTER;
    }
}
