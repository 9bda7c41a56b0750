package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.normalize;
import static dev.engram.understanding.RuleTokens.OPENING_QUOTES;
import static dev.engram.understanding.RuleTokens.lower;
import static dev.engram.understanding.RuleTokens.skipParenthetical;

import com.google.re2j.Pattern;
import dev.engram.schemas.EntityType;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Groups a passage's mentions into entities: one per normalized name, a lone surname joined to the full name it
 * ends, an acronym to the name it abbreviates, a birth or stage name to the name it renames.
 */
final class MentionGrouper {

    private static final Pattern WORD_BREAKS = Pattern.compile("[\\t\\n\\x0B\\f\\r -]+");

    /** Adverbs between the comma and "known as" ("also", "better", "professionally"). */
    private static final Set<String> KNOWN_AS_ADVERBS =
            Set.of("also", "better", "professionally", "commonly", "popularly", "widely", "simply", "mononymously");

    private final PassageState state;

    MentionGrouper(PassageState state) {
        this.state = state;
    }

    void group() {
        List<Mention> singles = new ArrayList<>();
        for (Mention m : state.mentions) {
            RelativeTime.Resolved r = state.relative.get(m);
            if (r != null) {
                // named by what it resolves to; "yesterday" is no alias: it names another day in every turn
                EntityGroup g = state.groups.computeIfAbsent(normalize(r.label()), k -> new EntityGroup(r.label()));
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
            EntityGroup full = surnameOwner(m.text);
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
        for (int s = 0; s < state.sentences.size(); s++) {
            List<Token> tokens = state.sentences.get(s).tokens();
            Map<Integer, Mention> byFirstToken = new HashMap<>();
            for (Mention m : state.mentionsIn(s)) {
                byFirstToken.put(m.firstToken, m);
            }
            for (Mention a : state.mentionsIn(s)) {
                if (!renameable(a)) {
                    continue;
                }
                int i = a.lastToken + 1;
                int after = skipParenthetical(tokens, i);
                for (int k = i + 1; k < after - 1; k++) {
                    int cueEnd = birthNameCue(tokens, k);
                    Mention b = cueEnd < 0 ? null : byFirstToken.get(cueEnd);
                    if (b != null && b.lastToken < after - 1 && renameable(b)) {
                        state.mergeGroups(b.group, a.group); // "(born Mosze Lifszyc; …)": the subject's name stays
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
                            state.mergeGroups(b.group, a.group);
                        } else {
                            state.mergeGroups(a.group, b.group); // "…, known professionally as Jamie Foxx"
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

    private void join(Mention m, String name) {
        EntityGroup g = state.groups.computeIfAbsent(normalize(name), k -> new EntityGroup(name));
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
    private EntityGroup surnameOwner(String word) {
        EntityGroup found = null;
        for (EntityGroup g : state.groups.values()) {
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
        for (EntityGroup g : List.copyOf(state.groups.values())) {
            if (!g.name.contains(" ")) {
                continue;
            }
            String initials = initials(g.name);
            EntityGroup acronym = state.groups.get(normalize(initials));
            if (acronym != null && acronym != g && initials.length() >= 2) {
                for (Mention m : acronym.mentions) {
                    m.group = g;
                    g.mentions.add(m);
                }
                g.aliases.add(acronym.name);
                state.groups.remove(normalize(initials));
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
}
