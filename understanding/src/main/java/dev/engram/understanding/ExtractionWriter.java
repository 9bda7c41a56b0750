package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.LEADING_AUXILIARIES;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Span;
import dev.engram.understanding.EnglishNlp.Token;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Writes what a passage's analysis gives: its memory (the text with pronouns replaced and relative times named),
 * its entities with their spans, and the utility questions templated from its most confident facts.
 */
final class ExtractionWriter {

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

    private final PassageState state;

    private final int questionsPerPassage;

    ExtractionWriter(PassageState state, int questionsPerPassage) {
        this.state = state;
        this.questionsPerPassage = questionsPerPassage;
    }

    /**
     * The text with its pronouns replaced by whom they stand for (a turn's "I'm" by "Caroline is") and each relative
     * time followed by what it names: "yesterday (7 May 2023)".
     */
    String memory() {
        record Edit(int start, int end, String with) {}
        List<Edit> edits = new ArrayList<>();
        for (Pronoun p : state.pronouns) {
            if (p.target().name.length() > Mention.MAX_NAME) {
                continue; // left as written: a name that long at every pronoun would multiply the text
            }
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
        for (RelativeTime.Resolved r : state.relative.values()) {
            edits.add(new Edit(r.end(), r.end(), " (" + r.label() + ")"));
        }
        edits.sort(Comparator.comparingInt(Edit::start).thenComparingInt(Edit::end));
        StringBuilder sb = new StringBuilder(state.original.length() + 64);
        int at = 0;
        for (Edit e : edits) {
            if (e.start() < at) {
                continue;
            }
            sb.append(state.original, at, e.start()).append(e.with());
            at = e.end();
        }
        return sb.append(state.original, at, state.original.length()).toString();
    }

    /**
     * Whether a first- or second-person pronoun is a subject whose verb follows it: "I" always; "you" unless a verb
     * or auxiliary comes before it ("Do you have…", "help you do…"); never me, myself, yourself or a possessive.
     */
    private boolean subjectPronoun(Pronoun p) {
        if (p.person() == 3 || p.possessive()) {
            return false;
        }
        String word = state.original.substring(p.start(), p.end()).toLowerCase(Locale.ROOT);
        if (word.equals("i")) {
            return true;
        }
        if (!word.equals("you")) {
            return false;
        }
        List<Token> tokens = state.sentences.get(p.sentence()).tokens();
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
            if (state.text.startsWith(v[0], at)
                    && (at + v[0].length() == state.text.length()
                            || !Character.isLetter(state.text.charAt(at + v[0].length())))) {
                return v;
            }
        }
        return null;
    }

    List<Extraction.Entity> entities() {
        List<Extraction.Entity> out = new ArrayList<>();
        for (EntityGroup g : state.groups.values()) {
            List<Span> spans = g.mentions.stream()
                    .sorted(Comparator.comparingInt((Mention m) -> m.start))
                    .map(m -> new Span(m.start, m.end))
                    .distinct()
                    .toList();
            out.add(new Extraction.Entity(g.name, g.type, g.description, List.copyOf(g.aliases), spans));
        }
        return out;
    }

    List<String> questions() {
        Set<String> out = new LinkedHashSet<>();
        Set<String> usedRelations = new LinkedHashSet<>();
        List<FactDraft> ranked = new ArrayList<>(state.facts);
        ranked.sort(Comparator.comparingDouble(FactDraft::confidence).reversed());
        for (FactDraft d : ranked) {
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
        EntityGroup about = state.subjectOfPassage();
        if (out.size() < questionsPerPassage && about != null) {
            out.add((about.type == EntityType.PERSON ? "Who is " : "What is ") + about.name + "?");
        }
        for (EntityGroup g : state.groups.values()) {
            if (out.size() >= questionsPerPassage) {
                break;
            }
            if (g.type != EntityType.DATE && g.type != EntityType.NUMBER && g.type != EntityType.CONCEPT) {
                out.add("What is known about " + g.name + "?");
            }
        }
        return out.stream().limit(questionsPerPassage).toList();
    }

    private String question(FactDraft d) {
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
            String active =
                    stripLeadingAuxiliary(d.relation().substring(0, d.relation().length() - 3));
            return (d.tail().type == EntityType.PERSON || d.tail().type == EntityType.OTHER ? "Who " : "What ") + active
                    + " " + d.head().name + "?";
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
}
