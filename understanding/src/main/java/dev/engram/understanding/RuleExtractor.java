package dev.engram.understanding;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnicodeText;
import dev.engram.understanding.EnglishNlp.Sentence;
import java.text.Normalizer;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
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

    public static final String ID = "embedded-rules/14";

    // Word lists: one resource file per list under dev/engram/understanding/rules/ (see WordLists), read once.
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
        return run(new PassageState(passage, prose, nlp.analyse(prose)));
    }

    /** One passage's phases, in order: mentions, descriptions, grouping and typing, pronouns, facts, the output. */
    private Extraction run(PassageState state) {
        List<Sentence> sentences = state.sentences;
        MentionFinder mentions = new MentionFinder(state);
        for (int s = 0; s < sentences.size(); s++) {
            mentions.findMentions(s);
        }
        state.mentions.sort(Comparator.comparingInt((Mention m) -> m.start));
        DescriptionFinder descriptions = new DescriptionFinder(state);
        for (int s = 0; s < sentences.size(); s++) {
            descriptions.findDescriptions(s);
        }
        new MentionGrouper(state).group();
        EntityTyper typer = new EntityTyper(state);
        typer.typeByCues();
        typer.qualifyByTitle();
        PronounResolver pronouns = new PronounResolver(state);
        pronouns.findSpeakers();
        pronouns.joinShortNames();
        pronouns.resolvePronouns();
        FactFinder facts = new FactFinder(state);
        for (int s = 0; s < sentences.size(); s++) {
            facts.findFacts(s);
            facts.timeFacts(s);
        }
        ExtractionWriter writer = new ExtractionWriter(state, questionsPerPassage);
        return new Extraction(
                writer.memory(),
                writer.entities(),
                facts.factList(),
                facts.relations(),
                writer.questions(),
                ID,
                null,
                Extraction.TokenUsage.NONE);
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
