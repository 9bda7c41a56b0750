package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.PERSON_PRONOUNS;
import static dev.engram.understanding.RuleExtractor.WORK_NOUNS;
import static dev.engram.understanding.RuleExtractor.normalize;
import static dev.engram.understanding.RuleTokens.isValue;
import static dev.engram.understanding.RuleTokens.lower;

import dev.engram.schemas.EntityType;
import dev.engram.understanding.EnglishNlp.Sentence;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.List;
import java.util.Set;

/**
 * Resolves a passage's pronouns to entities: a turn's first and second person to its speaker and addressee (who
 * become entities, as does a participant's short name), he/she/his/her to the last person named, and a
 * sentence-initial it/its or "the film" to the subject of the sentence before or of the passage.
 */
final class PronounResolver {

    /** First-person pronouns of a turn, which stand for its speaker (lower case; "i" is "I"). */
    private static final Set<String> FIRST_PERSON = Set.of("i", "me", "my", "mine", "myself");

    /** Second-person pronouns of a turn, which stand for its addressee when there is only one. */
    private static final Set<String> SECOND_PERSON = Set.of("you", "your", "yours", "yourself");

    private final PassageState state;

    private EntityGroup speaker;
    private EntityGroup addressee;

    PronounResolver(PassageState state) {
        this.state = state;
    }

    /**
     * The speaker of a conversation's turn is a person of it even when the turn does not name them; so is its
     * addressee when the turn speaks to them ("you"). A turn that names them joins them to the same entity.
     */
    void findSpeakers() {
        if (state.speakerName == null) {
            return;
        }
        speaker = person(state.speakerName);
        if (state.addresseeName != null && !normalize(state.addresseeName).equals(normalize(state.speakerName))) {
            for (Sentence sentence : state.sentences) {
                for (Token t : sentence.tokens()) {
                    if (SECOND_PERSON.contains(lower(t))) {
                        addressee = person(state.addresseeName);
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
    void joinShortNames() {
        if (state.people.isEmpty()) {
            return;
        }
        for (EntityGroup g : List.copyOf(state.groups.values())) {
            String nick = normalize(g.name);
            if ((g.type != EntityType.PERSON && g.type != EntityType.OTHER)
                    || nick.length() < 3
                    || nick.indexOf(' ') >= 0
                    || g.mentions.stream().noneMatch(this::readsAsAName)) {
                continue;
            }
            String named = null;
            for (String p : state.people) {
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
                EntityGroup into = person(named);
                if (into != g) {
                    state.mergeGroups(g, into);
                }
            }
        }
    }

    /** A mention that is not the first word of its sentence, or is set off by punctuation after it ("Mel,"). */
    private boolean readsAsAName(Mention m) {
        if (m.firstToken > 0) {
            return true;
        }
        for (int i = m.end; i < state.text.length(); i++) {
            char c = state.text.charAt(i);
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

    private EntityGroup person(String name) {
        EntityGroup g = state.groups.computeIfAbsent(normalize(name), k -> new EntityGroup(name));
        if (g.type == EntityType.OTHER || g.type == EntityType.CONCEPT) {
            g.type = EntityType.PERSON;
        }
        return g;
    }

    void resolvePronouns() {
        EntityGroup lastPerson = null;
        EntityGroup lastThing = null;
        EntityGroup subject = state.subjectOfPassage();
        for (int s = 0; s < state.sentences.size(); s++) {
            List<Token> tokens = state.sentences.get(s).tokens();
            List<Mention> inSentence = state.mentionsIn(s);
            int next = 0;
            for (int t = 0; t < tokens.size(); t++) {
                while (next < inSentence.size() && inSentence.get(next).lastToken < t) {
                    EntityGroup g = inSentence.get(next).group;
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
                    state.pronouns.add(new Pronoun(tok.start(), tok.start() + part.length(), s, t, speaker, mine, 1));
                    continue;
                }
                if (addressee != null && SECOND_PERSON.contains(part)) {
                    boolean yours = part.equals("your") || part.equals("yours");
                    state.pronouns.add(
                            new Pronoun(tok.start(), tok.start() + part.length(), s, t, addressee, yours, 2));
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
                    EntityGroup target = lastPerson;
                    if (target == null && subject != null && subject.type == EntityType.OTHER) {
                        subject.type = EntityType.PERSON;
                        target = subject;
                    }
                    if (target != null) {
                        state.pronouns.add(new Pronoun(tok.start(), tok.end(), s, t, target, possessive));
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
                    state.pronouns.add(new Pronoun(tok.start(), noun.end(), s, 1, subject, false));
                } else if ((w.equals("it") || w.equals("its")) && t == 0) {
                    EntityGroup target = s > 0 ? sentenceSubject(s - 1) : null;
                    if (target == null || target.type == EntityType.PERSON) {
                        target = lastThing;
                    }
                    if (target != null && target.type != EntityType.PERSON) {
                        state.pronouns.add(new Pronoun(tok.start(), tok.end(), s, t, target, possessive));
                    }
                }
            }
        }
    }

    private Mention mentionAt(int s, int token) {
        for (Mention m : state.mentionsIn(s)) {
            if (m.firstToken <= token && token <= m.lastToken) {
                return m;
            }
        }
        return null;
    }

    /** The first named, non-value entity of a sentence (or the entity its leading pronoun stands for). */
    private EntityGroup sentenceSubject(int s) {
        for (Pronoun p : state.pronouns) {
            if (p.sentence() == s && p.token() == 0) {
                return p.target();
            }
        }
        for (Mention m : state.mentionsIn(s)) {
            if (m.group != null && !isValue(m.type) && m.type != EntityType.CONCEPT) {
                return m.group;
            }
        }
        return null;
    }

    private static boolean isThing(EntityType t) {
        return t == EntityType.ORGANIZATION || t == EntityType.PLACE || t == EntityType.WORK || t == EntityType.OTHER;
    }
}
