package dev.engram.understanding;

import static dev.engram.understanding.NameBoundaries.NUMERAL;
import static dev.engram.understanding.NameBoundaries.allAdjectives;
import static dev.engram.understanding.NameBoundaries.andInInstitution;
import static dev.engram.understanding.NameBoundaries.continuesName;
import static dev.engram.understanding.NameBoundaries.startsName;
import static dev.engram.understanding.NameBoundaries.withoutPossessive;
import static dev.engram.understanding.RuleExtractor.CONNECTORS;
import static dev.engram.understanding.RuleExtractor.HONORIFICS;
import static dev.engram.understanding.RuleTokens.SPACE;
import static dev.engram.understanding.RuleTokens.capitalized;
import static dev.engram.understanding.RuleTokens.lower;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.engram.schemas.EntityType;
import dev.engram.understanding.EnglishNlp.Sentence;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.List;
import java.util.Set;

/**
 * Finds the mentions of one passage sentence by sentence: relative times, the title, dates, quoted titles,
 * numbers and names (see {@link NameBoundaries}), with honorifics, generations and peerages read as part of a
 * name or as a cue to it.
 */
final class MentionFinder {

    private static final Pattern DATE = Pattern.compile("\\b(?:(?:\\d{1,2}" + SPACE
            + "+)?(?:January|February|March|April|May|" + "June|July|August|September|October|November|December)"
            + SPACE + "+(?:\\d{1,2},?" + SPACE + "+)?)?(?:1[0-9]{3}|20[0-9]{2})s?\\b");
    /**
     * A pair of quotes. Every pair is consumed so that quotes pair up in order even where a pair holds lower-case
     * words or the spacing is loose ({@code films" Friday the 13th"( 1980)}); group 1 is what they hold.
     */
    private static final Pattern QUOTED = Pattern.compile("[\"“]([^\"”\\n]*)[\"”]");
    /** The longest quoted title read. */
    private static final int MAX_QUOTED = 80;

    private static final Pattern DEMONYM = Pattern.compile("\\p{Lu}\\p{Ll}+(?:an|ian|ese|ish|ic|i|ch|ss)");

    /** Generations written after a name and a comma. */
    private static final Set<String> GENERATIONS = Set.of("Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV");

    private final PassageState state;

    MentionFinder(PassageState state) {
        this.state = state;
    }

    void findMentions(int s) {
        Sentence sentence = state.sentences.get(s);
        List<Token> tokens = sentence.tokens();
        boolean[] taken = new boolean[tokens.size()];
        String sentenceText = state.text.substring(sentence.start(), sentence.end());
        addRelativeTimes(s, taken);
        if (state.titleWord != null) {
            addTitleMentions(s, sentenceText, state.titleWord, taken);
        }
        addPatternMentions(s, DATE.matcher(sentenceText), 0, EntityType.DATE, taken);
        addQuotedMentions(s, sentenceText, taken);
        int i = 0;
        while (i < tokens.size()) {
            if (taken[i] || !startsName(tokens, i)) {
                if (!taken[i]
                        && tokens.get(i).is("NUM")
                        && NUMERAL.matcher(tokens.get(i).text()).matches()) {
                    add(s, i, i, EntityType.NUMBER);
                }
                i++;
                continue;
            }
            int last = i;
            int j = i + 1;
            while (j < tokens.size() && !taken[j]) {
                if (continuesName(tokens, j)) {
                    last = j;
                    j++;
                } else if ((CONNECTORS.contains(lower(tokens.get(j))) || andInInstitution(tokens, j))
                        && j + 1 < tokens.size()
                        && !taken[j + 1]
                        && continuesName(tokens, j + 1)
                        && !tokens.get(j + 1).is("NUM")) {
                    j++;
                } else {
                    break;
                }
            }
            last = generationSuffix(tokens, taken, last);
            last = peerage(tokens, taken, i, last);
            if (!allAdjectives(tokens, i, last)) {
                add(s, i, last, EntityType.OTHER);
            }
            i = last + 1;
        }
    }

    /**
     * "yesterday", "last Saturday", "two weeks ago" in sentence {@code s}: a date mention each, named by the day or
     * span it resolves to, whose tokens no name may take ("Saturday" is no entity of its own).
     */
    private void addRelativeTimes(int s, boolean[] taken) {
        Sentence sentence = state.sentences.get(s);
        List<Token> tokens = sentence.tokens();
        for (RelativeTime.Resolved r : state.times) {
            if (r.start() < sentence.start() || r.end() > sentence.end()) {
                continue;
            }
            int first = -1;
            int last = -1;
            for (int t = 0; t < tokens.size(); t++) {
                if (tokens.get(t).start() >= r.start() && tokens.get(t).end() <= r.end()) {
                    first = first < 0 ? t : first;
                    last = t;
                }
            }
            if (first < 0 || overlapsTaken(taken, first, last)) {
                continue;
            }
            for (int t = first; t <= last; t++) {
                taken[t] = true;
            }
            Mention m = new Mention(r.expression(), r.start(), r.end(), EntityType.DATE, s, first, last);
            state.mentions.add(m);
            state.relative.put(m, r);
        }
    }

    /** "Lon Chaney, Jr.", "John Fox, Sr.": a generation after a comma is part of the name; the name's new last token. */
    private static int generationSuffix(List<Token> tokens, boolean[] taken, int last) {
        int comma = last + 1;
        int suffix = last + 2;
        if (suffix >= tokens.size()
                || taken[comma]
                || taken[suffix]
                || !tokens.get(comma).text().equals(",")
                || !GENERATIONS.contains(withoutPossessive(tokens.get(suffix).text()))) {
            return last;
        }
        boolean period = suffix + 1 < tokens.size()
                && !taken[suffix + 1]
                && tokens.get(suffix + 1).text().equals(".")
                && tokens.get(suffix + 1).start() == tokens.get(suffix).end()
                && suffix + 2 < tokens.size(); // a period that ends the sentence stays out
        return period ? suffix + 1 : suffix;
    }

    /**
     * "Edward Stafford, 3rd Duke of Buckingham", "Henry Stafford, 1st Baron Stafford": a personal name, a comma,
     * an ordinal and a title of nobility with its place are one name, the style a peer is known by; the name's new
     * last token.
     */
    private static int peerage(List<Token> tokens, boolean[] taken, int first, int last) {
        int title = last + 3;
        if (last == first
                || title + 1 >= tokens.size()
                || !tokens.get(last + 1).text().equals(",")
                || !ORDINAL.matcher(tokens.get(last + 2).text()).matches()
                || !NOBLE_TITLES.contains(lower(tokens.get(title)))
                || !capitalized(tokens.get(title))) {
            return last;
        }
        for (int t = first; t <= last; t++) {
            if (!tokens.get(t).is("PROPN")) {
                return last; // a personal name, not "Tudor England, 1st ..."
            }
        }
        int k = lower(tokens.get(title + 1)).equals("of") ? title + 2 : title + 1;
        int end = k;
        while (end < tokens.size()
                && !taken[end]
                && capitalized(tokens.get(end))
                && !tokens.get(end).is("PUNCT")) {
            end++;
        }
        for (int t = last + 1; t < end; t++) {
            if (taken[t]) {
                return last;
            }
        }
        return end > k ? end - 1 : last;
    }

    private static final Pattern ORDINAL = Pattern.compile("\\d{1,2}(?:st|nd|rd|th)");

    private static final Set<String> NOBLE_TITLES = Set.of(
            "duke",
            "duchess",
            "earl",
            "countess",
            "count",
            "baron",
            "baroness",
            "marquess",
            "marquis",
            "marchioness",
            "viscount",
            "viscountess",
            "lord",
            "lady",
            "baronet",
            "prince",
            "princess");

    private void addPatternMentions(int s, Matcher m, int group, EntityType type, boolean[] taken) {
        while (m.find()) {
            addSpanMention(s, m.start(group), m.end(group), type, taken);
        }
    }

    /**
     * The title where it stands as a whole word: a word boundary (as a regular expression's {@code \\b}, over ASCII
     * letters, digits and the underscore) before and after it, left to right and not overlapping. Found by searching
     * the string, in time about the sentence's length times the title's (at most {@link
     * PassageState#MAX_TITLE_WORD}), never more.
     */
    private void addTitleMentions(int s, String sentenceText, String title, boolean[] taken) {
        int from = 0;
        for (int at; (at = sentenceText.indexOf(title, from)) >= 0; ) {
            int end = at + title.length();
            if (wordBoundary(sentenceText, at) && wordBoundary(sentenceText, end)) {
                addSpanMention(s, at, end, EntityType.OTHER, taken);
                from = end;
            } else {
                from = at + 1;
            }
        }
    }

    /** Whether a word starts or ends at {@code at}: one side a word character (ASCII), the other not. */
    static boolean wordBoundary(String text, int at) {
        return asciiWord(text, at - 1) != asciiWord(text, at);
    }

    private static boolean asciiWord(String text, int i) {
        if (i < 0 || i >= text.length()) {
            return false;
        }
        char c = text.charAt(i);
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }

    /** Quoted titles: what a pair of quotes holds, without spaces inside them, when it opens with a capital or digit. */
    private void addQuotedMentions(int s, String sentenceText, boolean[] taken) {
        Matcher m = QUOTED.matcher(sentenceText);
        while (m.find()) {
            String held = m.group(1);
            int start = m.start(1) + (held.length() - held.stripLeading().length());
            int end = m.end(1) - (held.length() - held.stripTrailing().length());
            if (end - start >= 2
                    && end - start <= MAX_QUOTED
                    && (Character.isUpperCase(sentenceText.codePointAt(start))
                            || Character.isDigit(sentenceText.codePointAt(start)))) {
                addSpanMention(s, start, end, EntityType.WORK, taken);
            }
        }
    }

    /** A mention over the tokens inside [start, end) of sentence {@code s}, unless a token there is taken. */
    private void addSpanMention(int s, int spanStart, int spanEnd, EntityType type, boolean[] taken) {
        Sentence sentence = state.sentences.get(s);
        List<Token> tokens = sentence.tokens();
        int start = sentence.start() + spanStart;
        int end = sentence.start() + spanEnd;
        int first = -1;
        int last = -1;
        for (int t = 0; t < tokens.size(); t++) {
            Token tok = tokens.get(t);
            if (tok.start() >= start && tok.end() <= end) {
                if (first < 0) {
                    first = t;
                }
                last = t;
            }
        }
        if (first < 0 || overlapsTaken(taken, first, last)) {
            return;
        }
        if (type == EntityType.OTHER
                && ((last + 1 < tokens.size() && capitalized(tokens.get(last + 1)))
                        || (first > 0 && tokens.get(first - 1).is("PROPN")))) {
            return; // the title is part of a longer name here ("Ada" in "Ada Lovelace")
        }
        for (int t = first; t <= last; t++) {
            taken[t] = true;
        }
        int mStart = tokens.get(first).start();
        int mEnd = tokens.get(last).end();
        state.mentions.add(new Mention(state.text.substring(mStart, mEnd), mStart, mEnd, type, s, first, last));
    }

    private static boolean overlapsTaken(boolean[] taken, int first, int last) {
        for (int t = first; t <= last; t++) {
            if (taken[t]) {
                return true;
            }
        }
        return false;
    }

    private void add(int s, int first, int last, EntityType type) {
        List<Token> tokens = state.sentences.get(s).tokens();
        while (last > first && tokens.get(last).text().equals("'s")) {
            last--;
        }
        if (type == EntityType.OTHER
                && HONORIFICS.contains(lower(tokens.get(first)).replace(".", ""))) {
            if (first == last) {
                return; // a bare title ("President") names nobody by itself
            }
            if (CONNECTORS.contains(lower(tokens.get(first + 1))) && first + 2 <= last) {
                first += 2; // "Governor of Gibraltar": the office stays in the relation, the place is the entity
            } else {
                state.honorific.add(s + ":" + (first + 1));
                first++; // "King Valdemar II" names Valdemar II; the title is a cue, not part of the name
            }
        }
        for (int k = first + 1; k + 2 <= last; k++) {
            if (capitalized(tokens.get(k))
                    && HONORIFICS.contains(lower(tokens.get(k)).replace(".", ""))
                    && personName(tokens, k + 1, last)) {
                // "Queensland Senator Barnaby Joyce", "Attorney General Eric Holder": the office is a cue
                state.honorific.add(s + ":" + (k + 1));
                first = k + 1;
                break;
            }
        }
        if (type == EntityType.OTHER
                && first == last
                && DEMONYM.matcher(tokens.get(first).text()).matches()
                && first + 1 < tokens.size()
                && (tokens.get(first + 1).is("NOUN") || tokens.get(first + 1).is("ADJ"))
                && !capitalized(tokens.get(first + 1))) {
            return; // "Togolese politician": a nationality modifier, not an entity
        }
        int start = tokens.get(first).start();
        int end = tokens.get(last).end();
        if (end - start > 2 && (state.text.startsWith("'s", end - 2) || state.text.startsWith("’s", end - 2))) {
            end -= 2; // "Wright's" as one token: the possessive is not part of the name
        }
        while (end - start > 1 && state.text.charAt(end - 1) == '/') {
            end--; // "TBS/" as one token
        }
        if (end - start > Mention.MAX_NAME) {
            return; // a run of capitals that long is no name
        }
        String name = state.text.substring(start, end);
        if (name.length() < 2 && type != EntityType.NUMBER) {
            return;
        }
        state.mentions.add(new Mention(name, start, end, type, s, first, last));
    }

    /** Two or more capitalized proper nouns and nothing else, as a person's name after a title is. */
    private static boolean personName(List<Token> tokens, int first, int last) {
        for (int t = first; t <= last; t++) {
            if (!capitalized(tokens.get(t)) || !tokens.get(t).is("PROPN")) {
                return false;
            }
        }
        return last > first;
    }
}
