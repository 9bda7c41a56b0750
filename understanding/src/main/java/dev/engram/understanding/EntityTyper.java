package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.HONORIFICS;
import static dev.engram.understanding.RuleExtractor.ORGANIZATION_WORDS;
import static dev.engram.understanding.RuleExtractor.PERSON_NOUNS;
import static dev.engram.understanding.RuleExtractor.PERSON_VERBS;
import static dev.engram.understanding.RuleExtractor.PLACE_WORDS;
import static dev.engram.understanding.RuleExtractor.WORK_NOUNS;
import static dev.engram.understanding.RuleExtractor.normalize;
import static dev.engram.understanding.RuleTokens.SPACE;
import static dev.engram.understanding.RuleTokens.lower;

import com.google.re2j.Pattern;
import dev.engram.schemas.EntityType;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Types a passage's entities and gives them their descriptions: by cue words in and around their mentions, by the
 * class nouns of their descriptions, and by the qualifier of the passage's title ("(1966 film)", ", Virginia").
 */
final class EntityTyper {

    /** A place's qualifier after a comma in a title: "Virginia" in "Richmond, Virginia", "D.C.". */
    private static final Pattern TITLE_PLACE =
            Pattern.compile("\\p{Lu}[\\p{L}.'-]*(?:" + SPACE + "+\\p{Lu}[\\p{L}.'-]*)*");

    /** What follows a name and a comma without placing it: "Sammy Davis, Jr.", "Apple, Inc.". */
    private static final Set<String> NOT_PLACES =
            Set.of("jr", "sr", "ii", "iii", "iv", "inc", "ltd", "llc", "co", "corp", "plc", "mr", "mrs", "ms", "dr");

    /** Longer titles are not read for a qualifier. */
    private static final int MAX_TITLE = 200;

    private static final Pattern SPACES = Pattern.compile(SPACE + "+");

    private final PassageState state;

    EntityTyper(PassageState state) {
        this.state = state;
    }

    void typeByCues() {
        for (Mention m : state.mentions) {
            EntityGroup g = m.group;
            if (g == null || g.type != EntityType.OTHER) {
                continue;
            }
            EntityType t = cueType(m);
            if (t != EntityType.OTHER) {
                g.type = t;
            }
        }
        for (Map.Entry<Mention, String> d : state.descriptions.entrySet()) {
            EntityGroup g = d.getKey().group;
            // the first description, unless it is only a life's years and a later one says what the entity is
            if (g.description.isEmpty() || (yearsOnly(g.description) && !yearsOnly(d.getValue()))) {
                g.description = d.getValue();
            }
            String noun = state.classNouns.get(d.getKey());
            if (noun != null) {
                typeByNoun(g, noun);
            }
        }
    }

    private static boolean yearsOnly(String description) {
        return description.startsWith("(");
    }

    /** Types an entity that is still untyped (or only a place) by the noun that says what it is. */
    private static void typeByNoun(EntityGroup g, String noun) {
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
    void qualifyByTitle() {
        String t = state.title.strip();
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
        EntityGroup g = state.groups.get(normalize(name));
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

    /**
     * The name is followed by a common noun it qualifies ("in KRaft mode", "at Google headquarters"): the noun, not
     * the name, is what the preposition places.
     */
    private static boolean modifiesANoun(List<Token> tokens, int last) {
        if (last + 1 >= tokens.size()) {
            return false;
        }
        Token next = tokens.get(last + 1);
        return next.is("NOUN")
                && !next.text().isEmpty()
                && Character.isLowerCase(next.text().charAt(0));
    }

    /**
     * One word with a capital after a small letter inside ("RocksDB", "ZooKeeper", "KRaft", "iPhone"): the shape of a
     * product's or a project's name, not a place's; "McAllen", "MacArthur", "DeKalb" and "LaGrange" keep the cue.
     */
    private static boolean productShaped(Mention m) {
        if (m.firstToken != m.lastToken) {
            return false;
        }
        String w = m.text;
        for (int i = 1; i < w.length(); i++) {
            if (Character.isUpperCase(w.charAt(i)) && Character.isLowerCase(w.charAt(i - 1))) {
                String prefix = w.substring(0, i);
                return !PLACE_PREFIXES.contains(prefix);
            }
        }
        return false;
    }

    /**
     * One word of capitals each followed by a period, the last one's period perhaps taken by the sentence's end:
     * "U.S.", "U.K.", "U.N".
     */
    static boolean dottedInitialism(Mention m) {
        if (m.firstToken != m.lastToken) {
            return false;
        }
        String w = m.text.endsWith(".") ? m.text : m.text + ".";
        if (w.length() < 4 || w.length() % 2 != 0) {
            return false;
        }
        for (int i = 0; i < w.length(); i += 2) {
            if (!Character.isUpperCase(w.charAt(i)) || w.charAt(i + 1) != '.') {
                return false;
            }
        }
        return true;
    }

    /** Prefixes of place and family names that are written with a capital after them. */
    private static final Set<String> PLACE_PREFIXES = Set.of("Mc", "Mac", "De", "La", "Le", "Di", "Du", "Van", "Von");

    private EntityType cueType(Mention m) {
        List<Token> tokens = state.sentences.get(m.sentence).tokens();
        for (int t = m.firstToken; t <= m.lastToken; t++) {
            String w = lower(tokens.get(t));
            if (ORGANIZATION_WORDS.contains(w)) {
                return EntityType.ORGANIZATION;
            }
            if (PLACE_WORDS.contains(w)) {
                return EntityType.PLACE;
            }
        }
        if (state.honorific.contains(m.sentence + ":" + m.firstToken)) {
            return EntityType.PERSON;
        }
        String head = lower(tokens.get(m.firstToken)).replace(".", "");
        if (HONORIFICS.contains(head)
                || (m.firstToken > 0
                        && HONORIFICS.contains(
                                lower(tokens.get(m.firstToken - 1)).replace(".", "")))) {
            return EntityType.PERSON;
        }
        // "the U.S. raised tariffs": a dotted initialism names a country or a body, never a person alone
        for (int t = m.lastToken + 1; t < Math.min(tokens.size(), m.lastToken + 4) && !dottedInitialism(m); t++) {
            if (PERSON_VERBS.contains(lower(tokens.get(t)))) {
                return EntityType.PERSON;
            }
        }
        if (m.firstToken > 0) {
            Token before = tokens.get(m.firstToken - 1);
            String b = lower(before);
            if (before.is("ADP")
                    && (b.equals("in") || b.equals("near") || b.equals("at"))
                    && !modifiesANoun(tokens, m.lastToken)
                    && !productShaped(m)) {
                return EntityType.PLACE;
            }
        }
        return EntityType.OTHER;
    }
}
