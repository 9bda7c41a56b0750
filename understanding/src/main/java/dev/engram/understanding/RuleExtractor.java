package dev.engram.understanding;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.engram.schemas.Conversation;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.schemas.UnicodeText;
import dev.engram.understanding.EnglishNlp.Sentence;
import dev.engram.understanding.EnglishNlp.Token;
import java.text.Normalizer;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The offline extractor: Universal Dependencies part-of-speech tags (OpenNLP) and rules, deterministic and fast.
 *
 * <ul>
 *   <li>Entities: proper-noun runs with "X of Y" joins (and the hyphens, leading adjectives, "and" and group
 *       possessives of names of institutions), dates, numbers, quoted titles, and the class nouns of copular
 *       and appositive descriptions ("X is an English mathematician"), typed by cues; surnames and acronyms become
 *       aliases; every mention is an evidence span.
 *   <li>Facts: entity–verb(–preposition)–entity within a sentence (pronoun subjects resolved), copular and appositive
 *       "is a" facts, prepositional continuations ("born in London in 1912") and coordinations; sentences naming three
 *       or more entities around a verb also give a multi-entity relation.
 *   <li>Memory: the passage's sentences with he/she/his/her (and sentence-initial it/its) replaced by the nearest
 *       compatible entity, adding nothing the passage does not say.
 *   <li>Utility questions: templated from the most confident facts.
 * </ul>
 */
public final class RuleExtractor implements Extractor {

    public static final String ID = "embedded-rules/12";

    /** White space as Java's {@code \s} has it (RE2/J's leaves out the vertical tab). */
    private static final String SPACE = "[\\t\\n\\x0B\\f\\r ]";

    /** A place's qualifier after a comma in a title: "Virginia" in "Richmond, Virginia", "D.C.". */
    private static final Pattern TITLE_PLACE =
            Pattern.compile("\\p{Lu}[\\p{L}.'-]*(?:" + SPACE + "+\\p{Lu}[\\p{L}.'-]*)*");

    /** What follows a name and a comma without placing it: "Sammy Davis, Jr.", "Apple, Inc.". */
    private static final Set<String> NOT_PLACES =
            Set.of("jr", "sr", "ii", "iii", "iv", "inc", "ltd", "llc", "co", "corp", "plc", "mr", "mrs", "ms", "dr");

    /** Longer titles are not read for a qualifier. */
    private static final int MAX_TITLE = 200;

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

    private static final Pattern NUMERAL = Pattern.compile("\\d[\\d,.]*");
    /** A run of digits: a year when it is four of them, 1000-2099 ("(1432 – 1492)", "(born 11 June 1936)"). */
    private static final Pattern DIGITS = Pattern.compile("\\d+");

    private static final Pattern WORD_BREAKS = Pattern.compile("[\\t\\n\\x0B\\f\\r -]+");
    private static final Pattern SPACES = Pattern.compile(SPACE + "+");

    private static final Pattern DEMONYM = Pattern.compile("\\p{Lu}\\p{Ll}+(?:an|ian|ese|ish|ic|i|ch|ss)");

    // Word lists: one resource file per list under dev/engram/understanding/rules/ (see WordLists), read once.
    /** What a verb after "I" or "you" becomes after a name: the text's form, then its replacement. */
    private static final String[][] AGREEMENT = {
        {"'m", " is"},
        {"’m", " is"},
        {"'re", " is"},
        {"’re", " is"},
        {"'ve", " has"},
        {"’ve", " has"},
        {"'ll", " will"},
        {"’ll", " will"},
        {" am", " is"},
        {" are", " is"},
        {" have", " has"},
        {" were", " was"},
        {" do", " does"},
        {" don't", " doesn't"},
        {" don’t", " doesn’t"}
    };

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

    static final Set<String> CONNECTORS = WordLists.load("connectors");
    static final Set<String> HONORIFICS = WordLists.load("honorifics");
    static final Set<String> ORGANIZATION_WORDS = WordLists.load("organization-words");
    static final Set<String> PLACE_WORDS = WordLists.load("place-words");
    static final Set<String> PERSON_NOUNS = WordLists.load("person-nouns");
    static final Set<String> WORK_NOUNS = WordLists.load("work-nouns");
    static final Set<String> PERSON_PRONOUNS = WordLists.load("person-pronouns");
    static final Set<String> PERSON_VERBS = WordLists.load("person-verbs");
    static final Set<String> TRAILING_PREPOSITIONS = WordLists.load("trailing-prepositions");
    static final Set<String> LEADING_AUXILIARIES = WordLists.load("leading-auxiliaries");

    private final EnglishNlp nlp;
    private final int questionsPerPassage;

    public RuleExtractor(EnglishNlp nlp, int questionsPerPassage) {
        if (questionsPerPassage < 0) {
            throw new IllegalArgumentException("questionsPerPassage must not be negative");
        }
        this.nlp = nlp;
        this.questionsPerPassage = questionsPerPassage;
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public boolean cacheable() {
        return false;
    }

    @Override
    public Extraction extract(PassageEvent.Upsert passage) {
        // code is not prose: a fenced block is blanked (offsets kept) before names, dates and facts are looked for
        String prose = MarkdownBlocks.withoutCode(passage.text());
        return new Analysis(passage, prose, nlp.analyse(prose)).run();
    }

    /** A mention of an entity: its span and tokens within one sentence. */
    private static final class Mention {
        final int start;
        final int end;
        final String text;
        final int sentence;
        final int firstToken;
        final int lastToken;
        EntityType type;
        Group group;

        Mention(String text, int start, int end, EntityType type, int sentence, int firstToken, int lastToken) {
            this.text = text;
            this.start = start;
            this.end = end;
            this.type = type;
            this.sentence = sentence;
            this.firstToken = firstToken;
            this.lastToken = lastToken;
        }
    }

    /** The mentions of one entity. */
    private static final class Group {
        final String name;
        final List<Mention> mentions = new ArrayList<>();
        final Set<String> aliases = new LinkedHashSet<>();
        EntityType type = EntityType.OTHER;
        String description = "";

        Group(String name) {
            this.name = name;
        }
    }

    /**
     * A pronoun resolved to an entity; {@code person} is 1 or 2 for the first or second person of a conversation's
     * turn (resolved to its speaker or addressee), else 3.
     */
    private record Pronoun(int start, int end, int sentence, int token, Group target, boolean possessive, int person) {
        Pronoun(int start, int end, int sentence, int token, Group target, boolean possessive) {
            this(start, end, sentence, token, target, possessive, 3);
        }
    }

    /** First-person pronouns of a turn, which stand for its speaker (lower case; "i" is "I"). */
    private static final Set<String> FIRST_PERSON = Set.of("i", "me", "my", "mine", "myself");

    /** Second-person pronouns of a turn, which stand for its addressee when there is only one. */
    private static final Set<String> SECOND_PERSON = Set.of("you", "your", "yours", "yourself");

    /** A fact under construction, with the verb it was read from (for continuations). */
    private record Draft(Group head, String relation, Group tail, int start, int end, double confidence) {}

    /** One passage's analysis; not shared between threads. */
    private final class Analysis {
        private final String text;
        private final String title;
        private final List<Sentence> sentences;
        private final List<Mention> mentions = new ArrayList<>();
        private final Map<String, Group> groups = new LinkedHashMap<>();
        private final List<Pronoun> pronouns = new ArrayList<>();
        private final List<Draft> facts = new ArrayList<>();
        private final Set<String> honorific = new HashSet<>();
        /** The title as a whole word, without a closing parenthetical ("Kill or Be Killed (1966 film)"); or null. */
        private final Pattern titleWord;
        /** The speaker and the addressee of a conversation's turn, as named in its metadata; or null. */
        private final String speakerName;

        private final String addresseeName;
        /** Everyone taking part in a conversation's turn, the speaker first; empty for a document. */
        private final List<String> people;

        private Group speaker;
        private Group addressee;
        /** Relative time expressions of the text resolved against the day it was written (none without one). */
        private final List<RelativeTime.Resolved> times;
        /** The mentions made of those expressions, with what each names. */
        private final Map<Mention, RelativeTime.Resolved> relative = new LinkedHashMap<>();

        /** The passage's own text, which its memory is written from ({@link #text} has its code blanked). */
        private final String original;

        Analysis(PassageEvent.Upsert passage, String prose, List<Sentence> sentences) {
            this.text = prose;
            this.original = passage.text();
            this.title = passage.title();
            this.sentences = sentences;
            Conversation conversation = passage.conversation();
            this.speakerName = conversation == null ? null : conversation.speaker();
            this.addresseeName = conversation == null ? null : conversation.addressee();
            List<String> everyone = new ArrayList<>();
            if (conversation != null) {
                everyone.add(conversation.speaker());
                everyone.addAll(conversation.participants());
            }
            this.people = everyone;
            // only a conversation's turn is dated by when it was said; a document's event time is when it changed
            this.times = passage.eventTime() == null || conversation == null
                    ? List.of()
                    : RelativeTime.find(
                            text, passage.eventTime().atZone(ZoneOffset.UTC).toLocalDate());
            String titleName = withoutClosingParenthetical(this.title);
            this.titleWord = titleName.length() >= 2 ? Pattern.compile("\\b" + Pattern.quote(titleName) + "\\b") : null;
        }

        Extraction run() {
            for (int s = 0; s < sentences.size(); s++) {
                findMentions(s);
            }
            mentions.sort(Comparator.comparingInt((Mention m) -> m.start));
            for (int s = 0; s < sentences.size(); s++) {
                findDescriptions(s);
            }
            group();
            typeByCues();
            qualifyByTitle();
            findSpeakers();
            joinShortNames();
            resolvePronouns();
            for (int s = 0; s < sentences.size(); s++) {
                findFacts(s);
                timeFacts(s);
            }
            return new Extraction(
                    memory(), entities(), factList(), relations(), questions(), ID, null, Extraction.TokenUsage.NONE);
        }

        // ---- mentions -------------------------------------------------------------------------------------------

        private void findMentions(int s) {
            Sentence sentence = sentences.get(s);
            List<Token> tokens = sentence.tokens();
            boolean[] taken = new boolean[tokens.size()];
            String sentenceText = text.substring(sentence.start(), sentence.end());
            addRelativeTimes(s, taken);
            if (titleWord != null) {
                addPatternMentions(s, titleWord.matcher(sentenceText), 0, EntityType.OTHER, taken);
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
            Sentence sentence = sentences.get(s);
            List<Token> tokens = sentence.tokens();
            for (RelativeTime.Resolved r : times) {
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
                mentions.add(m);
                relative.put(m, r);
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
                    || !GENERATIONS.contains(
                            withoutPossessive(tokens.get(suffix).text()))) {
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
            Sentence sentence = sentences.get(s);
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
            mentions.add(new Mention(text.substring(mStart, mEnd), mStart, mEnd, type, s, first, last));
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
            List<Token> tokens = sentences.get(s).tokens();
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
                    honorific.add(s + ":" + (first + 1));
                    first++; // "King Valdemar II" names Valdemar II; the title is a cue, not part of the name
                }
            }
            for (int k = first + 1; k + 2 <= last; k++) {
                if (capitalized(tokens.get(k))
                        && HONORIFICS.contains(lower(tokens.get(k)).replace(".", ""))
                        && personName(tokens, k + 1, last)) {
                    // "Queensland Senator Barnaby Joyce", "Attorney General Eric Holder": the office is a cue
                    honorific.add(s + ":" + (k + 1));
                    first = k + 1;
                    break;
                }
            }
            if (type == EntityType.OTHER
                    && first == last
                    && DEMONYM.matcher(tokens.get(first).text()).matches()
                    && first + 1 < tokens.size()
                    && (tokens.get(first + 1).is("NOUN")
                            || tokens.get(first + 1).is("ADJ"))
                    && !capitalized(tokens.get(first + 1))) {
                return; // "Togolese politician": a nationality modifier, not an entity
            }
            int start = tokens.get(first).start();
            int end = tokens.get(last).end();
            if (end - start > 2 && (text.startsWith("'s", end - 2) || text.startsWith("’s", end - 2))) {
                end -= 2; // "Wright's" as one token: the possessive is not part of the name
            }
            while (end - start > 1 && text.charAt(end - 1) == '/') {
                end--; // "TBS/" as one token
            }
            String name = text.substring(start, end);
            if (name.length() < 2 && type != EntityType.NUMBER) {
                return;
            }
            mentions.add(new Mention(name, start, end, type, s, first, last));
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

        /**
         * A name starts at a proper noun, an acronym, capitalized adjectives that lead to a capitalized noun, a group's
         * possessive before a capital, or a capitalized noun that does not open its sentence.
         */
        private boolean startsName(List<Token> tokens, int i) {
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
        private boolean continuesName(List<Token> tokens, int i) {
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
        private static final Set<String> COLLECTIVE_POSSESSIVES = Set.of(
                "people's", "women's", "children's", "men's", "girls'", "boys'", "ladies'", "workers'", "veterans'");

        private static boolean collectivePossessive(Token t) {
            return capitalized(t)
                    && COLLECTIVE_POSSESSIVES.contains(
                            t.text().replace('’', '\'').toLowerCase(Locale.ROOT));
        }

        /**
         * "and" inside the name of an institution: the word before it names a domain an institution is for (a common
         * noun) and the capitalized words after it end in an organization word ("Mine Safety and Health
         * Administration", "Food and Drug Administration"), or the name opened with an organization word and "of"
         * and ends in a domain ("Academy of Motion Picture Arts and Sciences"); "France and Germany" stay two names.
         */
        private static boolean andInInstitution(List<Token> tokens, int j) {
            if (!lower(tokens.get(j)).equals("and")
                    || j < 1
                    || !INSTITUTION_DOMAINS.contains(lower(tokens.get(j - 1)))
                    || j + 1 >= tokens.size()
                    || acronym(tokens.get(j + 1))) {
                return false; // "Harvard and Yale University", "Microsoft and IBM Corporation" stay apart
            }
            int k = j + 1;
            while (k < tokens.size()
                    && capitalized(tokens.get(k))
                    && !tokens.get(k).is("PUNCT")) {
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
                "born", "led", "run", "era", "old", "made", "like", "wide", "free", "long", "type", "size", "year",
                "age", "day", "time", "week", "term", "line", "side", "area", "bred", "held", "only", "less", "fed",
                "set", "up", "in", "on", "off", "out", "to", "of", "and", "or", "the", "a", "an");

        private static boolean glued(List<Token> tokens, int a, int b) {
            return a >= 0
                    && b < tokens.size()
                    && tokens.get(a).end() == tokens.get(b).start();
        }

        /**
         * All adjectives ("American", "Soviet", "Anglo-French"): no name; an acronym the tagger took for one ("IMF")
         * is a name.
         */
        private boolean allAdjectives(List<Token> tokens, int first, int last) {
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
        private static String withoutPossessive(String word) {
            return word.length() > 2 && (word.endsWith("'s") || word.endsWith("’s"))
                    ? word.substring(0, word.length() - 2)
                    : word;
        }

        private static boolean capitalized(Token t) {
            return capitalized(t.text());
        }

        private static boolean capitalized(String w) {
            return !w.isEmpty() && Character.isUpperCase(w.codePointAt(0));
        }

        private static boolean isOpening(Token t) {
            return t.is("PUNCT") && "\"“'‘([{:".contains(t.text());
        }

        // ---- descriptions ---------------------------------------------------------------------------------------

        /** "X is/was a Y" and "X, a Y," give X a description and a class noun (a concept entity). */
        private void findDescriptions(int s) {
            List<Token> tokens = sentences.get(s).tokens();
            for (Mention m : mentionsIn(s)) {
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
                    if (i < tokens.size()
                            && CLOSING_QUOTES.contains(tokens.get(i).text())) {
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
                        descriptions.putIfAbsent(m, "(" + String.join("–", asideYears) + ")");
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
                String description = text.substring(
                                tokens.get(np + 1).start(), tokens.get(descEnd).end())
                        .strip();
                if (!asideYears.isEmpty()) {
                    description += " (" + String.join("–", asideYears) + ")";
                }
                int conceptFirst = np + 1;
                while (conceptFirst < lastNoun
                        && (tokens.get(conceptFirst).is("NUM") || overlapsMention(s, conceptFirst, conceptFirst))) {
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
                if (conceptLast < conceptFirst || overlapsMention(s, conceptFirst, conceptLast)) {
                    continue;
                }
                int cStart = tokens.get(conceptFirst).start();
                int cEnd = tokens.get(conceptLast).end();
                Mention concept = new Mention(
                        text.substring(cStart, cEnd), cStart, cEnd, EntityType.CONCEPT, s, conceptFirst, conceptLast);
                mentions.add(concept);
                mentions.sort(Comparator.comparingInt((Mention x) -> x.start));
                descriptions.put(m, description);
                classNouns.put(m, lower(tokens.get(conceptLast)));
                copulas.add(new Copula(m, concept, copular ? lower(tokens.get(i)) : "is"));
            }
        }

        // in text order (mentions hash by identity): an entity's first description in the passage is its description,
        // the same in every run
        private final Map<Mention, String> descriptions = new LinkedHashMap<>();
        private final Map<Mention, String> classNouns = new LinkedHashMap<>();
        private final List<Copula> copulas = new ArrayList<>();

        private record Copula(Mention subject, Mention concept, String verb) {}

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

        private int skipParenthetical(List<Token> tokens, int i) {
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

        private boolean overlapsMention(int s, int first, int last) {
            for (Mention m : mentionsIn(s)) {
                if (m.firstToken <= last && first <= m.lastToken) {
                    return true;
                }
            }
            return false;
        }

        // ---- grouping and typing ---------------------------------------------------------------------------------

        private void group() {
            List<Mention> singles = new ArrayList<>();
            for (Mention m : mentions) {
                RelativeTime.Resolved r = relative.get(m);
                if (r != null) {
                    // named by what it resolves to; "yesterday" is no alias: it names another day in every turn
                    Group g = groups.computeIfAbsent(normalize(r.label()), k -> new Group(r.label()));
                    g.type = EntityType.DATE;
                    g.mentions.add(m);
                    m.group = g;
                    continue;
                }
                if (m.type != EntityType.CONCEPT && m.type != EntityType.DATE && !m.text.contains(" ")) {
                    singles.add(m);
                    continue;
                }
                join(m, m.text);
            }
            for (Mention m : singles) {
                Group full = surnameOwner(m.text);
                if (full != null) {
                    full.aliases.add(m.text);
                    full.mentions.add(m);
                    m.group = full;
                } else {
                    join(m, m.text);
                }
            }
            findAcronyms();
            findRenamings();
        }

        /**
         * A name and the other name it is given right after it are one entity: "Aleksander Ford (born Mosze Lifszyc;
         * …)", "Roman Polanski (… original name Raymond Thierry Liebling)" keep the first name; "Eric Marlon Bishop
         * (born …), known professionally as Jamie Foxx" takes the name it is known by; "X, also known as Y" keeps X.
         * The other name becomes an alias. Only a proper name right after the cue counts ("known as the King of Soul"
         * names no alias).
         */
        private void findRenamings() {
            for (int s = 0; s < sentences.size(); s++) {
                List<Token> tokens = sentences.get(s).tokens();
                Map<Integer, Mention> byFirstToken = new HashMap<>();
                for (Mention m : mentionsIn(s)) {
                    byFirstToken.put(m.firstToken, m);
                }
                for (Mention a : mentionsIn(s)) {
                    if (!renameable(a)) {
                        continue;
                    }
                    int i = a.lastToken + 1;
                    int after = skipParenthetical(tokens, i);
                    for (int k = i + 1; k < after - 1; k++) {
                        int cueEnd = birthNameCue(tokens, k);
                        Mention b = cueEnd < 0 ? null : byFirstToken.get(cueEnd);
                        if (b != null && b.lastToken < after - 1 && renameable(b)) {
                            mergeGroups(b.group, a.group); // "(born Mosze Lifszyc; …)": the subject's name stays
                            break;
                        }
                    }
                    if (after + 1 < tokens.size() && tokens.get(after).text().equals(",")) {
                        int k = after + 1;
                        boolean also = false;
                        while (k < tokens.size() && KNOWN_AS_ADVERBS.contains(lower(tokens.get(k)))) {
                            also |= lower(tokens.get(k)).equals("also");
                            k++;
                        }
                        int cueEnd = -1;
                        if (k < tokens.size() && lower(tokens.get(k)).equals("known")) {
                            int as = k + 1; // "known professionally as"
                            while (as < tokens.size() && KNOWN_AS_ADVERBS.contains(lower(tokens.get(as)))) {
                                also |= lower(tokens.get(as)).equals("also");
                                as++;
                            }
                            cueEnd = as < tokens.size() && lower(tokens.get(as)).equals("as") ? as + 1 : -1;
                        } else if (k == after + 1) {
                            cueEnd = birthNameCue(tokens, k); // "X, born Y, was"
                            also = true;
                        }
                        if (cueEnd >= 0
                                && cueEnd < tokens.size()
                                && OPENING_QUOTES.contains(tokens.get(cueEnd).text())) {
                            cueEnd++;
                        }
                        Mention b = cueEnd < 0 ? null : byFirstToken.get(cueEnd);
                        if (b != null && renameable(b)) {
                            if (also) {
                                mergeGroups(b.group, a.group);
                            } else {
                                mergeGroups(a.group, b.group); // "…, known professionally as Jamie Foxx"
                            }
                        }
                    }
                }
            }
        }

        /** The token after a cue that a birth or earlier name follows ("born", "née", "original name"), or -1. */
        private static int birthNameCue(List<Token> tokens, int k) {
            String w = lower(tokens.get(k));
            if (w.equals("born") || w.equals("née") || w.equals("nee") || w.equals("formerly")) {
                return k + 1;
            }
            if (k + 2 < tokens.size()
                    && (w.equals("original") || w.equals("birth"))
                    && lower(tokens.get(k + 1)).equals("name")) {
                return k + 2;
            }
            return -1;
        }

        private static boolean renameable(Mention m) {
            return m.group != null
                    && (m.type == EntityType.PERSON || m.type == EntityType.OTHER || m.type == EntityType.ORGANIZATION)
                    && (m.group.type == EntityType.PERSON
                            || m.group.type == EntityType.OTHER
                            || m.group.type == EntityType.ORGANIZATION);
        }

        /** Moves every mention of {@code from} into {@code into}, whose alias its names become. */
        private void mergeGroups(Group from, Group into) {
            if (from == into || groups.get(normalize(from.name)) != from) {
                return;
            }
            for (Mention m : from.mentions) {
                m.group = into;
                into.mentions.add(m);
            }
            into.aliases.add(from.name);
            into.aliases.addAll(from.aliases);
            into.aliases.remove(into.name);
            if (into.type == EntityType.OTHER) {
                into.type = from.type;
            }
            groups.remove(normalize(from.name));
        }

        private void join(Mention m, String name) {
            Group g = groups.computeIfAbsent(normalize(name), k -> new Group(name));
            if (!g.name.equals(m.text)) {
                g.aliases.add(m.text);
            }
            g.mentions.add(m);
            m.group = g;
            if (g.type == EntityType.OTHER && m.type != EntityType.OTHER) {
                g.type = m.type;
            }
        }

        /** The multi-word name entity whose last word is {@code word} ("Babbage" → "Charles Babbage"). */
        private Group surnameOwner(String word) {
            Group found = null;
            for (Group g : groups.values()) {
                if (g.type != EntityType.OTHER && g.type != EntityType.PERSON) {
                    continue;
                }
                String[] parts = g.name.split(" ");
                if (parts.length > 1 && parts[parts.length - 1].equals(word)) {
                    if (found != null && found != g) {
                        return null; // ambiguous: two people share the surname
                    }
                    found = g;
                }
            }
            return found;
        }

        /** "Convolutional Neural Network (CNN)": the acronym becomes an alias. */
        private void findAcronyms() {
            for (Group g : List.copyOf(groups.values())) {
                if (!g.name.contains(" ")) {
                    continue;
                }
                String initials = initials(g.name);
                Group acronym = groups.get(normalize(initials));
                if (acronym != null && acronym != g && initials.length() >= 2) {
                    for (Mention m : acronym.mentions) {
                        m.group = g;
                        g.mentions.add(m);
                    }
                    g.aliases.add(acronym.name);
                    groups.remove(normalize(initials));
                }
            }
        }

        private static String initials(String name) {
            StringBuilder sb = new StringBuilder();
            for (String w : WORD_BREAKS.split(name)) {
                if (!w.isEmpty() && Character.isUpperCase(w.charAt(0))) {
                    sb.append(w.charAt(0));
                }
            }
            return sb.toString();
        }

        private void typeByCues() {
            for (Mention m : mentions) {
                Group g = m.group;
                if (g == null || g.type != EntityType.OTHER) {
                    continue;
                }
                EntityType t = cueType(m);
                if (t != EntityType.OTHER) {
                    g.type = t;
                }
            }
            for (Map.Entry<Mention, String> d : descriptions.entrySet()) {
                Group g = d.getKey().group;
                // the first description, unless it is only a life's years and a later one says what the entity is
                if (g.description.isEmpty() || (yearsOnly(g.description) && !yearsOnly(d.getValue()))) {
                    g.description = d.getValue();
                }
                String noun = classNouns.get(d.getKey());
                if (noun != null) {
                    typeByNoun(g, noun);
                }
            }
        }

        private static boolean yearsOnly(String description) {
            return description.startsWith("(");
        }

        /** Types an entity that is still untyped (or only a place) by the noun that says what it is. */
        private static void typeByNoun(Group g, String noun) {
            if (g.type == EntityType.OTHER || g.type == EntityType.PLACE) {
                if (PERSON_NOUNS.contains(noun)) {
                    g.type = EntityType.PERSON;
                } else if (WORK_NOUNS.contains(noun)) {
                    g.type = EntityType.WORK;
                } else if (ORGANIZATION_WORDS.contains(noun)) {
                    g.type = EntityType.ORGANIZATION;
                } else if (PLACE_WORDS.contains(noun) || noun.equals("country") || noun.equals("capital")) {
                    g.type = EntityType.PLACE;
                }
            }
        }

        /**
         * "Kill or Be Killed (1966 film)", "Richmond, Virginia": a title that qualifies its subject's name says which of
         * the name's referents the passage is about. The qualifier joins the description of the entity named so, in
         * parentheses, and types it when its last word is a class noun ("film").
         */
        private void qualifyByTitle() {
            String t = title.strip();
            if (t.length() > MAX_TITLE) {
                return;
            }
            String name;
            String qualifier;
            int open = t.lastIndexOf('(');
            int comma = t.lastIndexOf(',');
            if (t.endsWith(")") && open > 0) {
                name = t.substring(0, open);
                qualifier = t.substring(open + 1, t.length() - 1);
            } else if (comma > 0 && t.indexOf('(') < 0) {
                name = t.substring(0, comma);
                qualifier = t.substring(comma + 1).strip();
                if (!TITLE_PLACE.matcher(qualifier).matches()
                        || NOT_PLACES.contains(qualifier.replace(".", "").toLowerCase(Locale.ROOT))) {
                    return;
                }
            } else {
                return;
            }
            Group g = groups.get(normalize(name));
            boolean place = open < 0 || !t.endsWith(")");
            qualifier = qualifier.strip();
            if (g == null
                    || qualifier.isEmpty()
                    || qualifier.indexOf('(') >= 0
                    || qualifier.indexOf(')') >= 0
                    || (place && g.type != EntityType.PLACE && g.type != EntityType.OTHER)
                    || g.type == EntityType.CONCEPT
                    || g.type == EntityType.DATE
                    || g.type == EntityType.NUMBER
                    || g.description.toLowerCase(Locale.ROOT).contains(qualifier.toLowerCase(Locale.ROOT))) {
                return;
            }
            g.description = (g.description + " (" + qualifier + ")").strip();
            String[] words = SPACES.split(qualifier);
            String last = words[words.length - 1];
            if (!last.isEmpty() && Character.isLowerCase(last.codePointAt(0))) {
                typeByNoun(g, last);
            }
        }

        private EntityType cueType(Mention m) {
            List<Token> tokens = sentences.get(m.sentence).tokens();
            for (int t = m.firstToken; t <= m.lastToken; t++) {
                String w = lower(tokens.get(t));
                if (ORGANIZATION_WORDS.contains(w)) {
                    return EntityType.ORGANIZATION;
                }
                if (PLACE_WORDS.contains(w)) {
                    return EntityType.PLACE;
                }
            }
            if (honorific.contains(m.sentence + ":" + m.firstToken)) {
                return EntityType.PERSON;
            }
            String head = lower(tokens.get(m.firstToken)).replace(".", "");
            if (HONORIFICS.contains(head)
                    || (m.firstToken > 0
                            && HONORIFICS.contains(
                                    lower(tokens.get(m.firstToken - 1)).replace(".", "")))) {
                return EntityType.PERSON;
            }
            for (int t = m.lastToken + 1; t < Math.min(tokens.size(), m.lastToken + 4); t++) {
                if (PERSON_VERBS.contains(lower(tokens.get(t)))) {
                    return EntityType.PERSON;
                }
            }
            if (m.firstToken > 0) {
                Token before = tokens.get(m.firstToken - 1);
                String b = lower(before);
                if (before.is("ADP") && (b.equals("in") || b.equals("near") || b.equals("at"))) {
                    return EntityType.PLACE;
                }
            }
            return EntityType.OTHER;
        }

        // ---- pronouns --------------------------------------------------------------------------------------------

        /**
         * The speaker of a conversation's turn is a person of it even when the turn does not name them; so is its
         * addressee when the turn speaks to them ("you"). A turn that names them joins them to the same entity.
         */
        private void findSpeakers() {
            if (speakerName == null) {
                return;
            }
            speaker = person(speakerName);
            if (addresseeName != null && !normalize(addresseeName).equals(normalize(speakerName))) {
                for (Sentence sentence : sentences) {
                    for (Token t : sentence.tokens()) {
                        if (SECOND_PERSON.contains(lower(t))) {
                            addressee = person(addresseeName);
                            return;
                        }
                    }
                }
            }
        }

        /**
         * A short form of one participant's first name ("Mel" for Melanie, "Deb" for Deborah), said to them or by
         * them, names that participant: its mentions join the participant's entity, whose alias it becomes. Only a
         * one-word person (or untyped) name of three letters or more that starts the first name of exactly one
         * participant, and only where it is a vocative or inside a sentence: "Car broke down" names no Caroline.
         */
        private void joinShortNames() {
            if (people.isEmpty()) {
                return;
            }
            for (Group g : List.copyOf(groups.values())) {
                String nick = normalize(g.name);
                if ((g.type != EntityType.PERSON && g.type != EntityType.OTHER)
                        || nick.length() < 3
                        || nick.indexOf(' ') >= 0
                        || g.mentions.stream().noneMatch(this::readsAsAName)) {
                    continue;
                }
                String named = null;
                for (String p : people) {
                    String first = normalize(p);
                    int space = first.indexOf(' ');
                    first = space < 0 ? first : first.substring(0, space);
                    if (first.length() > nick.length() && first.startsWith(nick)) {
                        if (named != null && !normalize(named).equals(normalize(p))) {
                            named = null; // the short form of two participants: neither
                            break;
                        }
                        named = p;
                    }
                }
                if (named != null) {
                    Group into = person(named);
                    if (into != g) {
                        mergeGroups(g, into);
                    }
                }
            }
        }

        /** A mention that is not the first word of its sentence, or is set off by punctuation after it ("Mel,"). */
        private boolean readsAsAName(Mention m) {
            if (m.firstToken > 0) {
                return true;
            }
            for (int i = m.end; i < text.length(); i++) {
                char c = text.charAt(i);
                if (!Character.isWhitespace(c)) {
                    return c == ',' || c == '!' || c == '?' || c == '.';
                }
            }
            return true;
        }

        private static String beforeApostrophe(String word) {
            for (int i = 1; i < word.length(); i++) {
                if (word.charAt(i) == '\'' || word.charAt(i) == '’') {
                    return word.substring(0, i);
                }
            }
            return word;
        }

        private Group person(String name) {
            Group g = groups.computeIfAbsent(normalize(name), k -> new Group(name));
            if (g.type == EntityType.OTHER || g.type == EntityType.CONCEPT) {
                g.type = EntityType.PERSON;
            }
            return g;
        }

        private void resolvePronouns() {
            Group lastPerson = null;
            Group lastThing = null;
            Group subject = subjectOfPassage();
            for (int s = 0; s < sentences.size(); s++) {
                List<Token> tokens = sentences.get(s).tokens();
                List<Mention> inSentence = mentionsIn(s);
                int next = 0;
                for (int t = 0; t < tokens.size(); t++) {
                    while (next < inSentence.size() && inSentence.get(next).lastToken < t) {
                        Group g = inSentence.get(next).group;
                        if (g != null && g.type == EntityType.PERSON) {
                            lastPerson = g;
                        } else if (g != null && isThing(g.type)) {
                            lastThing = g;
                        }
                        next++;
                    }
                    Token tok = tokens.get(t);
                    String w = lower(tok);
                    String part = beforeApostrophe(w); // "I'm" and "you're" may be one token, tagged as a verb
                    if (!tok.is("PRON") && !tok.is("DET") && part.length() == w.length()) {
                        continue;
                    }
                    if (speaker != null && FIRST_PERSON.contains(part)) {
                        boolean mine = part.equals("my") || part.equals("mine");
                        pronouns.add(new Pronoun(tok.start(), tok.start() + part.length(), s, t, speaker, mine, 1));
                        continue;
                    }
                    if (addressee != null && SECOND_PERSON.contains(part)) {
                        boolean yours = part.equals("your") || part.equals("yours");
                        pronouns.add(new Pronoun(tok.start(), tok.start() + part.length(), s, t, addressee, yours, 2));
                        continue;
                    }
                    boolean possessive = w.equals("his")
                            || w.equals("its")
                            || w.equals("hers")
                            || (w.equals("her")
                                    && t + 1 < tokens.size()
                                    && (tokens.get(t + 1).is("NOUN")
                                            || tokens.get(t + 1).is("ADJ")));
                    if (PERSON_PRONOUNS.contains(w)) {
                        Group target = lastPerson;
                        if (target == null && subject != null && subject.type == EntityType.OTHER) {
                            subject.type = EntityType.PERSON;
                            target = subject;
                        }
                        if (target != null) {
                            pronouns.add(new Pronoun(tok.start(), tok.end(), s, t, target, possessive));
                            lastPerson = target;
                        }
                    } else if (t == 0
                            && (w.equals("the") || w.equals("this"))
                            && tokens.size() > 1
                            && WORK_NOUNS.contains(lower(tokens.get(1)))
                            && subject != null
                            && subject.type != EntityType.PERSON
                            && mentionAt(s, 1) == null) {
                        // "The film stars ...": a definite description of what the passage is about
                        Token noun = tokens.get(1);
                        pronouns.add(new Pronoun(tok.start(), noun.end(), s, 1, subject, false));
                    } else if ((w.equals("it") || w.equals("its")) && t == 0) {
                        Group target = s > 0 ? sentenceSubject(s - 1) : null;
                        if (target == null || target.type == EntityType.PERSON) {
                            target = lastThing;
                        }
                        if (target != null && target.type != EntityType.PERSON) {
                            pronouns.add(new Pronoun(tok.start(), tok.end(), s, t, target, possessive));
                        }
                    }
                }
            }
        }

        private Mention mentionAt(int s, int token) {
            for (Mention m : mentionsIn(s)) {
                if (m.firstToken <= token && token <= m.lastToken) {
                    return m;
                }
            }
            return null;
        }

        /** The first named, non-value entity of a sentence (or the entity its leading pronoun stands for). */
        private Group sentenceSubject(int s) {
            for (Pronoun p : pronouns) {
                if (p.sentence() == s && p.token() == 0) {
                    return p.target();
                }
            }
            for (Mention m : mentionsIn(s)) {
                if (m.group != null && !isValue(m.type) && m.type != EntityType.CONCEPT) {
                    return m.group;
                }
            }
            return null;
        }

        private static boolean isThing(EntityType t) {
            return t == EntityType.ORGANIZATION
                    || t == EntityType.PLACE
                    || t == EntityType.WORK
                    || t == EntityType.OTHER;
        }

        /** The entity the passage is about: the one named like the title, or the first named entity. */
        private Group subjectOfPassage() {
            Group byTitle = title.isBlank() ? null : groups.get(normalize(title));
            if (byTitle != null) {
                return byTitle;
            }
            for (Mention m : mentions) {
                if (m.group != null
                        && m.type != EntityType.DATE
                        && m.type != EntityType.NUMBER
                        && m.type != EntityType.CONCEPT) {
                    return m.group;
                }
            }
            return null;
        }

        // ---- facts -----------------------------------------------------------------------------------------------

        /** An entity occurrence in a sentence: a mention or a resolved pronoun. */
        private record Anchor(Group group, int first, int last, int start, int end) {}

        // Anchors are compared by identity: which occurrence a fact starts from, not which equal-valued one.
        @SuppressWarnings("ReferenceEquality")
        private void findFacts(int s) {
            List<Token> tokens = sentences.get(s).tokens();
            List<Anchor> anchors = new ArrayList<>();
            for (Mention m : mentionsIn(s)) {
                anchors.add(new Anchor(m.group, m.firstToken, m.lastToken, m.start, m.end));
            }
            for (Pronoun p : pronouns) {
                if (p.sentence() == s) {
                    anchors.add(new Anchor(p.target(), p.token(), p.token(), p.start(), p.end()));
                }
            }
            anchors.sort(Comparator.comparingInt(Anchor::first));
            for (Copula c : copulas) {
                if (c.subject().sentence == s) {
                    addFact(
                            c.subject().group,
                            c.verb() + " a",
                            c.concept().group,
                            c.subject().start,
                            c.concept().end,
                            0.9);
                }
            }
            Anchor subject = anchors.stream()
                    .filter(a -> a.group().type != EntityType.DATE && a.group().type != EntityType.NUMBER)
                    .findFirst()
                    .orElse(null);
            lifeDates(s, tokens);
            locations(s, tokens);
            Draft previous = null;
            for (int k = 0; k + 1 < anchors.size(); k++) {
                Anchor a = anchors.get(k);
                Anchor b = anchors.get(k + 1);
                if (b.group().type == EntityType.CONCEPT) {
                    continue; // class nouns only enter facts through copulas
                }
                if (b.first() <= a.last()) {
                    continue; // overlapping anchors (a pronoun inside a quoted title): no gap to read
                }
                List<Token> gap = tokens.subList(a.last() + 1, b.first());
                if (gap.size() > 10) {
                    previous = null;
                    continue;
                }
                int verb = firstVerb(gap);
                if (verb < 0
                        && isPronounAt(s, a.first())
                        && !gap.isEmpty()
                        && gap.size() <= 2
                        && gap.get(0).is("NOUN")
                        && !capitalized(gap.get(0))) {
                    verb = 0; // "It stars X": a pronoun subject's verb is often mistagged as a plural noun
                }
                if (verb >= 0) {
                    String relation = relation(gap, verb);
                    boolean fromSubject = gap.get(0).is("PUNCT")
                            || gap.get(0).is("CCONJ")
                            || isValue(a.group().type)
                            || a.group().type == EntityType.CONCEPT;
                    Anchor head = fromSubject && subject != null && subject.first() < b.first() ? subject : a;
                    if (relation.isEmpty() || head.group() == b.group()) {
                        continue;
                    }
                    double confidence = head == a && gap.size() <= 4 ? 0.85 : 0.7;
                    previous = addFact(head.group(), relation, b.group(), head.start(), b.end(), confidence);
                } else if (previous != null && isContinuation(gap)) {
                    String prep = continuationPreposition(gap);
                    String base = stripTrailingPreposition(previous.relation());
                    String relation = prep.isEmpty() ? previous.relation() : base + " " + prep;
                    if (previous.head() != b.group()) {
                        addFact(previous.head(), relation, b.group(), previous.start(), b.end(), 0.6);
                    }
                } else {
                    previous = null;
                }
            }
        }

        /**
         * A resolved relative time gives a fact from the sentence's subject (the speaker when "I" is the subject): "I
         * went to a support group yesterday" said on 8 May 2023 states (speaker, "went on", 7 May 2023). Only when a
         * verb stands between the two.
         */
        private void timeFacts(int s) {
            List<Token> tokens = sentences.get(s).tokens();
            for (Map.Entry<Mention, RelativeTime.Resolved> e : relative.entrySet()) {
                Mention when = e.getKey();
                if (when.sentence != s) {
                    continue;
                }
                Group head = null;
                int after = -1;
                int start = 0;
                for (Pronoun p : pronouns) {
                    if (p.sentence() == s && p.token() < when.firstToken && !p.possessive()) {
                        head = p.target();
                        after = p.token();
                        start = p.start();
                        break;
                    }
                }
                for (Mention m : mentionsIn(s)) {
                    if (m.group != null
                            && m.lastToken < when.firstToken
                            && (head == null || m.lastToken < after)
                            && !isValue(m.type)
                            && m.type != EntityType.CONCEPT) {
                        head = m.group;
                        after = m.lastToken;
                        start = m.start;
                        break;
                    }
                }
                if (head == null || head == when.group) {
                    continue;
                }
                List<Token> gap = tokens.subList(after + 1, when.firstToken);
                int verb = firstVerb(gap);
                if (verb < 0) {
                    continue;
                }
                String preposition =
                        switch (e.getValue().grain()) {
                            case DAY, WEEKEND -> " on";
                            default -> " in";
                        };
                addFact(head, lower(gap.get(verb)) + preposition, when.group, start, when.end, 0.6);
            }
        }

        /** "Name (1 May 1900 – 2 June 1980)" and "Name (born 1 May 1900)": birth and death dates. */
        private void lifeDates(int s, List<Token> tokens) {
            for (Mention m : mentionsIn(s)) {
                if (m.group == null
                        || isValue(m.type)
                        || m.type == EntityType.CONCEPT
                        || m.lastToken + 1 >= tokens.size()
                        || !tokens.get(m.lastToken + 1).text().equals("(")) {
                    continue;
                }
                int close = skipParenthetical(tokens, m.lastToken + 1) - 1;
                List<Mention> dates = new ArrayList<>();
                boolean born = false;
                boolean died = false;
                for (Mention d : mentionsIn(s)) {
                    if (d.type == EntityType.DATE && d.firstToken > m.lastToken && d.lastToken < close) {
                        dates.add(d);
                    }
                }
                for (int t = m.lastToken + 2; t < close; t++) {
                    String w = lower(tokens.get(t));
                    born |= w.equals("born") || w.equals("b.");
                    died |= w.equals("died") || w.equals("d.");
                }
                if (dates.isEmpty()) {
                    continue;
                }
                int end = tokens.get(Math.max(m.lastToken + 1, close)).end();
                if (dates.size() >= 2 && !born) {
                    addFact(m.group, "born on", dates.get(0).group, m.start, end, 0.85);
                    addFact(m.group, "died on", dates.get(dates.size() - 1).group, m.start, end, 0.85);
                } else if (died) {
                    addFact(m.group, "died on", dates.get(0).group, m.start, end, 0.8);
                } else {
                    addFact(m.group, "born on", dates.get(0).group, m.start, end, 0.8);
                }
                if (m.group.type == EntityType.OTHER) {
                    m.group.type = EntityType.PERSON;
                }
            }
        }

        /** Prepositions after which "X, Y" names a place in a larger one; "written by X, Y and Z" is a list. */
        private static final Set<String> PLACE_PREPOSITIONS =
                Set.of("in", "at", "near", "from", "to", "into", "outside", "around", "across", "within", "toward");

        /** "Richmond, Virginia": a place named with the larger place it lies in. */
        private void locations(int s, List<Token> tokens) {
            List<Mention> ms = mentionsIn(s);
            for (int k = 0; k + 1 < ms.size(); k++) {
                Mention a = ms.get(k);
                Mention b = ms.get(k + 1);
                if (a.group == null
                        || b.group == null
                        || a.group == b.group
                        || b.firstToken != a.lastToken + 2
                        || !tokens.get(a.lastToken + 1).text().equals(",")) {
                    continue;
                }
                boolean placeLike = a.group.type == EntityType.PLACE
                        || (a.firstToken > 0
                                && tokens.get(a.firstToken - 1).is("ADP")
                                && PLACE_PREPOSITIONS.contains(lower(tokens.get(a.firstToken - 1))));
                boolean ends = b.lastToken + 1 >= tokens.size()
                        || tokens.get(b.lastToken + 1).is("PUNCT")
                        || tokens.get(b.lastToken + 1).is("CCONJ")
                        || tokens.get(b.lastToken + 1).is("ADP");
                boolean placeTypes = (a.group.type == EntityType.PLACE || a.group.type == EntityType.OTHER)
                        && (b.group.type == EntityType.PLACE || b.group.type == EntityType.OTHER);
                if (placeLike && ends && placeTypes) {
                    addFact(a.group, "located in", b.group, a.start, b.end, 0.7);
                    a.group.type = EntityType.PLACE;
                    b.group.type = EntityType.PLACE;
                }
            }
        }

        private Draft addFact(Group head, String relation, Group tail, int start, int end, double confidence) {
            for (Draft d : facts) {
                if (d.head() == head && d.tail() == tail && d.relation().equals(relation)) {
                    return d;
                }
            }
            Draft d = new Draft(head, relation, tail, start, end, confidence);
            facts.add(d);
            return d;
        }

        private boolean isPronounAt(int s, int token) {
            for (Pronoun p : pronouns) {
                if (p.sentence() == s && p.token() == token) {
                    return true;
                }
            }
            return false;
        }

        private int firstVerb(List<Token> gap) {
            for (int i = 0; i < gap.size(); i++) {
                if (gap.get(i).is("VERB")) {
                    return i;
                }
            }
            for (int i = 0; i < gap.size(); i++) {
                if (gap.get(i).is("AUX") && !isBe(gap.get(i))) {
                    return i;
                }
            }
            return -1;
        }

        /** The verb phrase of a gap: from the verb (with a preceding auxiliary) to the end, content words only. */
        private String relation(List<Token> gap, int verb) {
            int from = verb;
            while (from > 0 && (gap.get(from - 1).is("AUX") || gap.get(from - 1).is("PART"))) {
                from--;
            }
            StringBuilder sb = new StringBuilder();
            for (int i = from; i < gap.size(); i++) {
                Token t = gap.get(i);
                if (t.is("PUNCT") || t.is("DET") || t.is("PRON") || t.is("CCONJ") || t.is("SCONJ")) {
                    continue;
                }
                if (!sb.isEmpty()) {
                    sb.append(' ');
                }
                sb.append(t.text());
            }
            return sb.toString();
        }

        private boolean isContinuation(List<Token> gap) {
            boolean any = false;
            for (Token t : gap) {
                if (t.is("ADP") || t.is("CCONJ")) {
                    any = true;
                } else if (!t.is("PUNCT") && !t.is("DET")) {
                    return false;
                }
            }
            return any || gap.stream().allMatch(t -> t.text().equals(","));
        }

        private String continuationPreposition(List<Token> gap) {
            for (Token t : gap) {
                if (t.is("ADP")) {
                    return lower(t);
                }
            }
            return "";
        }

        private static String stripTrailingPreposition(String relation) {
            int space = relation.lastIndexOf(' ');
            if (space < 0) {
                return relation;
            }
            String last = relation.substring(space + 1);
            return TRAILING_PREPOSITIONS.contains(last) ? relation.substring(0, space) : relation;
        }

        private List<Extraction.Fact> factList() {
            List<Extraction.Fact> out = new ArrayList<>();
            for (Draft d : facts) {
                out.add(new Extraction.Fact(
                        d.head().name, d.relation(), d.tail().name, new Span(d.start(), d.end()), d.confidence()));
            }
            return out;
        }

        private List<Extraction.Relation> relations() {
            List<Extraction.Relation> out = new ArrayList<>();
            for (int s = 0; s < sentences.size(); s++) {
                Set<String> names = new LinkedHashSet<>();
                for (Mention m : mentionsIn(s)) {
                    if (m.group != null && m.type != EntityType.CONCEPT) {
                        names.add(m.group.name);
                    }
                }
                for (Pronoun p : pronouns) {
                    if (p.sentence() == s) {
                        names.add(p.target().name);
                    }
                }
                List<Token> tokens = sentences.get(s).tokens();
                List<Token> outside = new ArrayList<>();
                for (int t = 0; t < tokens.size(); t++) {
                    if (!overlapsMention(s, t, t)) {
                        outside.add(tokens.get(t));
                    }
                }
                int verbAt = firstVerb(outside);
                int verb = verbAt < 0 ? -1 : tokens.indexOf(outside.get(verbAt));
                if (names.size() >= 3 && verb >= 0) {
                    String relation = lower(tokens.get(verb));
                    if (verb + 1 < tokens.size() && tokens.get(verb + 1).is("ADP")) {
                        relation += " " + lower(tokens.get(verb + 1));
                    }
                    Sentence sentence = sentences.get(s);
                    out.add(new Extraction.Relation(
                            relation, List.copyOf(names), new Span(sentence.start(), sentence.end()), 0.5));
                }
            }
            return out;
        }

        // ---- memory, entities, questions -------------------------------------------------------------------------

        /**
         * The text with its pronouns replaced by whom they stand for (a turn's "I'm" by "Caroline is") and each relative
         * time followed by what it names: "yesterday (7 May 2023)".
         */
        private String memory() {
            record Edit(int start, int end, String with) {}
            List<Edit> edits = new ArrayList<>();
            for (Pronoun p : pronouns) {
                String with = p.target().name + (p.possessive() ? "'s" : "");
                int end = p.end();
                if (subjectPronoun(p)) {
                    String[] verb = agreement(end);
                    if (verb != null) {
                        with += verb[1];
                        end += verb[0].length();
                    }
                }
                edits.add(new Edit(p.start(), end, with));
            }
            for (RelativeTime.Resolved r : relative.values()) {
                edits.add(new Edit(r.end(), r.end(), " (" + r.label() + ")"));
            }
            edits.sort(Comparator.comparingInt(Edit::start).thenComparingInt(Edit::end));
            StringBuilder sb = new StringBuilder(original.length() + 64);
            int at = 0;
            for (Edit e : edits) {
                if (e.start() < at) {
                    continue;
                }
                sb.append(original, at, e.start()).append(e.with());
                at = e.end();
            }
            return sb.append(original, at, original.length()).toString();
        }

        /**
         * Whether a first- or second-person pronoun is a subject whose verb follows it: "I" always; "you" unless a verb
         * or auxiliary comes before it ("Do you have…", "help you do…"); never me, myself, yourself or a possessive.
         */
        private boolean subjectPronoun(Pronoun p) {
            if (p.person() == 3 || p.possessive()) {
                return false;
            }
            String word = original.substring(p.start(), p.end()).toLowerCase(Locale.ROOT);
            if (word.equals("i")) {
                return true;
            }
            if (!word.equals("you")) {
                return false;
            }
            List<Token> tokens = sentences.get(p.sentence()).tokens();
            if (p.token() == 0) {
                return true;
            }
            Token before = tokens.get(p.token() - 1);
            return !before.is("AUX") && !before.is("VERB");
        }

        /**
         * The verb right after a first- or second-person subject, as it reads after a name: {@code [what the text
         * has, what replaces it]} ("'m" → " is", " have" → " has"), or null when it reads the same.
         */
        private String[] agreement(int at) {
            for (String[] v : AGREEMENT) {
                if (text.startsWith(v[0], at)
                        && (at + v[0].length() == text.length()
                                || !Character.isLetter(text.charAt(at + v[0].length())))) {
                    return v;
                }
            }
            return null;
        }

        private List<Extraction.Entity> entities() {
            List<Extraction.Entity> out = new ArrayList<>();
            for (Group g : groups.values()) {
                List<Span> spans = g.mentions.stream()
                        .sorted(Comparator.comparingInt((Mention m) -> m.start))
                        .map(m -> new Span(m.start, m.end))
                        .distinct()
                        .toList();
                out.add(new Extraction.Entity(g.name, g.type, g.description, List.copyOf(g.aliases), spans));
            }
            return out;
        }

        private List<String> questions() {
            Set<String> out = new LinkedHashSet<>();
            Set<String> usedRelations = new LinkedHashSet<>();
            List<Draft> ranked = new ArrayList<>(facts);
            ranked.sort(Comparator.comparingDouble(Draft::confidence).reversed());
            for (Draft d : ranked) {
                if (out.size() >= questionsPerPassage) {
                    break;
                }
                if (usedRelations.add(d.relation()) || out.size() < questionsPerPassage) {
                    String q = question(d);
                    if (q != null) {
                        out.add(q);
                    }
                }
            }
            Group about = subjectOfPassage();
            if (out.size() < questionsPerPassage && about != null) {
                out.add((about.type == EntityType.PERSON ? "Who is " : "What is ") + about.name + "?");
            }
            for (Group g : groups.values()) {
                if (out.size() >= questionsPerPassage) {
                    break;
                }
                if (g.type != EntityType.DATE && g.type != EntityType.NUMBER && g.type != EntityType.CONCEPT) {
                    out.add("What is known about " + g.name + "?");
                }
            }
            return out.stream().limit(questionsPerPassage).toList();
        }

        private String question(Draft d) {
            String r = d.relation().toLowerCase(Locale.ROOT);
            boolean person = d.head().type == EntityType.PERSON;
            boolean dateTail = d.tail().type == EntityType.DATE;
            if (r.contains("born")) {
                return (dateTail ? "When was " : "Where was ") + d.head().name + " born?";
            }
            if (r.contains("died")) {
                return (dateTail ? "When did " : "Where did ") + d.head().name + " die?";
            }
            if (r.endsWith(" a") && d.tail().type == EntityType.CONCEPT) {
                return (person ? "Who was " : "What is ") + d.head().name + "?";
            }
            if (r.endsWith(" by")) {
                String active = stripLeadingAuxiliary(
                        d.relation().substring(0, d.relation().length() - 3));
                return (d.tail().type == EntityType.PERSON || d.tail().type == EntityType.OTHER ? "Who " : "What ")
                        + active + " " + d.head().name + "?";
            }
            return (person ? "Who " : "What ") + d.relation() + " " + d.tail().name + "?";
        }

        private String stripLeadingAuxiliary(String relation) {
            // No entry plus its space is a prefix of another's, so at most one can match and order does not matter.
            for (String aux : LEADING_AUXILIARIES) {
                if (relation.startsWith(aux + " ")) {
                    return relation.substring(aux.length() + 1);
                }
            }
            return relation;
        }

        // ---- helpers ---------------------------------------------------------------------------------------------

        private List<Mention> mentionsIn(int s) {
            List<Mention> out = new ArrayList<>();
            for (Mention m : mentions) {
                if (m.sentence == s) {
                    out.add(m);
                }
            }
            return out;
        }
    }

    private static boolean isValue(EntityType t) {
        return t == EntityType.DATE || t == EntityType.NUMBER;
    }

    private static final Set<String> CLOSING_QUOTES = Set.of("\"", "”", "''", "’");
    /** Adverbs between the comma and "known as" ("also", "better", "professionally"). */
    private static final Set<String> KNOWN_AS_ADVERBS =
            Set.of("also", "better", "professionally", "commonly", "popularly", "widely", "simply", "mononymously");

    private static final Set<String> OPENING_QUOTES = Set.of("\"", "“", "``", "‘");
    /** Words that open an aside renaming its subject: "born", "née", "also known as", "formerly", "nicknamed". */
    private static final Set<String> ASIDE_WORDS =
            Set.of("born", "née", "nee", "also", "known", "as", "formerly", "officially", "nicknamed", "called");

    private static final int MAX_ASIDE = 25;
    /** Generations written after a name and a comma. */
    private static final Set<String> GENERATIONS = Set.of("Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV");

    private static boolean isBe(Token t) {
        return Set.of("is", "was", "are", "were").contains(lower(t)) && (t.is("AUX") || t.is("VERB"));
    }

    private static boolean isArticle(Token t) {
        return Set.of("a", "an", "the").contains(lower(t));
    }

    private static boolean isContent(Token t) {
        return t.is("NOUN") || t.is("PROPN") || t.is("ADJ") || t.is("NUM");
    }

    private static String lower(Token t) {
        return t.text().toLowerCase(Locale.ROOT);
    }

    /** One upper-case letter and nothing else ("B" in "Gregory B. Penner"). */
    private static boolean singleCapital(String text) {
        return !text.isEmpty()
                && text.length() == Character.charCount(text.codePointAt(0))
                && Character.getType(text.codePointAt(0)) == Character.UPPERCASE_LETTER;
    }

    /**
     * A title without the parenthetical that closes it and the white space around it: "Kill or Be Killed" of "Kill or
     * Be Killed (1966 film)". The parenthetical opens at the first {@code (} after the last {@code )} before its own.
     */
    static String withoutClosingParenthetical(String title) {
        String t = title.stripTrailing();
        if (t.endsWith(")")) {
            int open = t.indexOf('(', t.lastIndexOf(')', t.length() - 2) + 1);
            if (open >= 0 && open < t.length() - 1) {
                t = t.substring(0, open);
            }
        }
        return t.strip();
    }

    /** Case, diacritics and punctuation folded, for grouping mentions of one name. */
    static String normalize(String name) {
        String folded = UnicodeText.withoutMarks(Normalizer.normalize(name, Normalizer.Form.NFKD))
                .toLowerCase(Locale.ROOT);
        String s = UnicodeText.spacedWords(folded).strip();
        return s.startsWith("the ") ? s.substring(4) : s;
    }
}
