package dev.engram.understanding;

import static dev.engram.understanding.RuleExtractor.normalize;
import static dev.engram.understanding.RuleExtractor.withoutClosingParenthetical;

import dev.engram.schemas.Conversation;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.PassageEvent;
import dev.engram.understanding.EnglishNlp.Sentence;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One passage's analysis as the rule extractor's phases build it: its text and sentences, the mentions found
 * in it, the entities they group into, the pronouns resolved and the facts read; not shared between threads.
 */
final class PassageState {

    final String text;
    final String title;
    final List<Sentence> sentences;
    final List<Mention> mentions = new ArrayList<>();
    final Map<String, EntityGroup> groups = new LinkedHashMap<>();
    final List<Pronoun> pronouns = new ArrayList<>();
    final List<FactDraft> facts = new ArrayList<>();
    final Set<String> honorific = new HashSet<>();
    /**
     * The title without a closing parenthetical ("Kill or Be Killed (1966 film)"), found in the text as a whole word;
     * or null when it is shorter than two characters or longer than {@link #MAX_TITLE_WORD}.
     */
    final String titleWord;

    /** A longer title is not looked for in the text: no entity's name is that long. */
    static final int MAX_TITLE_WORD = Mention.MAX_NAME;
    /** The speaker and the addressee of a conversation's turn, as named in its metadata; or null. */
    final String speakerName;

    final String addresseeName;
    /** Everyone taking part in a conversation's turn, the speaker first; empty for a document. */
    final List<String> people;

    /** Relative time expressions of the text resolved against the day it was written (none without one). */
    final List<RelativeTime.Resolved> times;
    /** The mentions made of those expressions, with what each names. */
    final Map<Mention, RelativeTime.Resolved> relative = new LinkedHashMap<>();

    /** The passage's own text, which its memory is written from ({@link #text} has its code blanked). */
    final String original;

    // in text order (mentions hash by identity): an entity's first description in the passage is its description,
    // the same in every run
    final Map<Mention, String> descriptions = new LinkedHashMap<>();
    final Map<Mention, String> classNouns = new LinkedHashMap<>();
    final List<Copula> copulas = new ArrayList<>();

    PassageState(PassageEvent.Upsert passage, String prose, List<Sentence> sentences) {
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
        this.titleWord = titleName.length() >= 2 && titleName.length() <= MAX_TITLE_WORD ? titleName : null;
    }

    /** The mentions of sentence {@code s}. */
    List<Mention> mentionsIn(int s) {
        List<Mention> out = new ArrayList<>();
        for (Mention m : mentions) {
            if (m.sentence == s) {
                out.add(m);
            }
        }
        return out;
    }

    /** Whether a mention of sentence {@code s} covers a token from {@code first} to {@code last}. */
    boolean overlapsMention(int s, int first, int last) {
        for (Mention m : mentionsIn(s)) {
            if (m.firstToken <= last && first <= m.lastToken) {
                return true;
            }
        }
        return false;
    }

    /** Moves every mention of {@code from} into {@code into}, whose alias its names become. */
    void mergeGroups(EntityGroup from, EntityGroup into) {
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

    /** The entity the passage is about: the one named like the title, or the first named entity. */
    EntityGroup subjectOfPassage() {
        EntityGroup byTitle = title.isBlank() ? null : groups.get(normalize(title));
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
}
