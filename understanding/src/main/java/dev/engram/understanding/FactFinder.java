package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.TRAILING_PREPOSITIONS;
import static dev.engram.understanding.RuleTokens.capitalized;
import static dev.engram.understanding.RuleTokens.isBe;
import static dev.engram.understanding.RuleTokens.isValue;
import static dev.engram.understanding.RuleTokens.lower;
import static dev.engram.understanding.RuleTokens.skipParenthetical;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Span;
import dev.engram.understanding.EnglishNlp.Sentence;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a passage's facts sentence by sentence: verbs between entities (pronouns resolved) and their
 * prepositional continuations, copulas, life dates, "X, Y" locations and resolved relative times; and the
 * multi-entity relations of sentences naming three or more.
 */
final class FactFinder {

    private final PassageState state;

    FactFinder(PassageState state) {
        this.state = state;
    }

    /** An entity occurrence in a sentence: a mention or a resolved pronoun. */
    private record Anchor(EntityGroup group, int first, int last, int start, int end) {}

    // Anchors are compared by identity: which occurrence a fact starts from, not which equal-valued one.
    @SuppressWarnings("ReferenceEquality")
    void findFacts(int s) {
        List<Token> tokens = state.sentences.get(s).tokens();
        List<Anchor> anchors = new ArrayList<>();
        for (Mention m : state.mentionsIn(s)) {
            anchors.add(new Anchor(m.group, m.firstToken, m.lastToken, m.start, m.end));
        }
        for (Pronoun p : state.pronouns) {
            if (p.sentence() == s) {
                anchors.add(new Anchor(p.target(), p.token(), p.token(), p.start(), p.end()));
            }
        }
        anchors.sort(Comparator.comparingInt(Anchor::first));
        for (Copula c : state.copulas) {
            if (c.subject().sentence == s) {
                addFact(c.subject().group, c.verb() + " a", c.concept().group, c.subject().start, c.concept().end, 0.9);
            }
        }
        Anchor subject = anchors.stream()
                .filter(a -> a.group().type != EntityType.DATE && a.group().type != EntityType.NUMBER)
                .findFirst()
                .orElse(null);
        lifeDates(s, tokens);
        locations(s, tokens);
        FactDraft previous = null;
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
    void timeFacts(int s) {
        List<Token> tokens = state.sentences.get(s).tokens();
        for (Map.Entry<Mention, RelativeTime.Resolved> e : state.relative.entrySet()) {
            Mention when = e.getKey();
            if (when.sentence != s) {
                continue;
            }
            EntityGroup head = null;
            int after = -1;
            int start = 0;
            for (Pronoun p : state.pronouns) {
                if (p.sentence() == s && p.token() < when.firstToken && !p.possessive()) {
                    head = p.target();
                    after = p.token();
                    start = p.start();
                    break;
                }
            }
            for (Mention m : state.mentionsIn(s)) {
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
        for (Mention m : state.mentionsIn(s)) {
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
            for (Mention d : state.mentionsIn(s)) {
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
        List<Mention> ms = state.mentionsIn(s);
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

    private FactDraft addFact(
            EntityGroup head, String relation, EntityGroup tail, int start, int end, double confidence) {
        for (FactDraft d : state.facts) {
            if (d.head() == head && d.tail() == tail && d.relation().equals(relation)) {
                return d;
            }
        }
        FactDraft d = new FactDraft(head, relation, tail, start, end, confidence);
        state.facts.add(d);
        return d;
    }

    private boolean isPronounAt(int s, int token) {
        for (Pronoun p : state.pronouns) {
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

    List<Extraction.Fact> factList() {
        List<Extraction.Fact> out = new ArrayList<>();
        for (FactDraft d : state.facts) {
            out.add(new Extraction.Fact(
                    d.head().name, d.relation(), d.tail().name, new Span(d.start(), d.end()), d.confidence()));
        }
        return out;
    }

    List<Extraction.Relation> relations() {
        List<Extraction.Relation> out = new ArrayList<>();
        for (int s = 0; s < state.sentences.size(); s++) {
            Set<String> names = new LinkedHashSet<>();
            for (Mention m : state.mentionsIn(s)) {
                if (m.group != null && m.type != EntityType.CONCEPT) {
                    names.add(m.group.name);
                }
            }
            for (Pronoun p : state.pronouns) {
                if (p.sentence() == s) {
                    names.add(p.target().name);
                }
            }
            List<Token> tokens = state.sentences.get(s).tokens();
            List<Token> outside = new ArrayList<>();
            for (int t = 0; t < tokens.size(); t++) {
                if (!state.overlapsMention(s, t, t)) {
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
                Sentence sentence = state.sentences.get(s);
                out.add(new Extraction.Relation(
                        relation, List.copyOf(names), new Span(sentence.start(), sentence.end()), 0.5));
            }
        }
        return out;
    }
}
