package dev.engram.stores;

import com.google.re2j.Pattern;
import dev.engram.schemas.UnicodeText;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

/**
 * What a mention's description says about which referent it names, in the few parts that tell namesakes apart: the
 * head noun of the description ("footballer" in "Scottish former footballer who played for Hibernian"), the years it
 * names ("2017" in "2017 British drama film"), its proper qualifiers ("Scottish", "British") and its proper
 * complements: where or by whom the referent is, by the preposition that opens them ("in DeMotte" in "high school
 * in DeMotte", "by Filter"; every proper word in parentheses counts too, in a slot of its own, since a title's
 * qualifier lands there). Complements are compared only within one slot: "on the James River" and "in Virginia"
 * say different things, not contrary ones. Two mentions of one name
 * whose senses differ in these parts are told apart before any resolution; two whose senses {@link #conflicts
 * conflict} are different referents by the description alone.
 *
 * <p>A sense is a pure function of the description, so the surface entity a mention belongs to is a function of the
 * mention alone, whatever order mentions arrive in. A mention without a description (or whose description holds none
 * of the three parts) has the empty sense and stands for the bare name.
 *
 * @param head the head noun, lower case; empty when the description has none
 * @param years four-digit years from 1000 to 2099
 * @param qualifiers capitalized words before the head, lower case ("Scottish", "British"): what kind of the head
 * @param complements capitalized words after the head, after a preposition and before any clause ("who played for
 *     …", "directed by …"), and in parentheses, lower case and prefixed by their slot ("in:demotte", "aside:filter"):
 *     where or by whom the referent is
 * @param words every lower-case word of the description, for telling whether one head is among the other's words
 */
public record DescriptionSense(
        String head,
        SortedSet<String> years,
        SortedSet<String> qualifiers,
        SortedSet<String> complements,
        Set<String> words) {

    /** The sense of a mention without description. */
    public static final DescriptionSense NONE =
            new DescriptionSense("", new TreeSet<>(), new TreeSet<>(), new TreeSet<>(), Set.of());

    private static final Pattern YEAR = Pattern.compile("1\\d{3}|20\\d{2}");
    /** Words after which a description stops naming what the referent is and starts saying more about it. */
    private static final Set<String> STOP = Set.of(
            "of",
            "in",
            "at",
            "from",
            "for",
            "by",
            "with",
            "who",
            "whom",
            "whose",
            "which",
            "that",
            "and",
            "or",
            "to",
            "on",
            "as",
            "born",
            "located",
            "known",
            "based",
            "directed",
            "written",
            "produced",
            "released",
            "starring",
            "featuring",
            "founded",
            "played",
            "best",
            "is",
            "was",
            "where",
            "when");
    /**
     * Words after which a description tells a story rather than where or by whom its referent is ("who played for",
     * "known as"): proper words after them are not complements, since a referent can have many such.
     */
    private static final Set<String> CLAUSE = Set.of(
            "born",
            "best",
            "directed",
            "produced",
            "written",
            "composed",
            "performed",
            "recorded",
            "released",
            "published",
            "who",
            "whom",
            "whose",
            "which",
            "that",
            "where",
            "when",
            "played",
            "known",
            "starring",
            "featuring",
            "also");
    /**
     * Kinds of creative work, by the head nouns that name them: an album and its title song, a novel and its film,
     * share names all the time and are never one referent. Head nouns of one line are one kind.
     */
    private static final Map<String, String> WORK_KINDS = kinds(
            "song single track",
            "album record lp ep soundtrack compilation",
            "film movie documentary",
            "novel novella book",
            "series sitcom show",
            "episode",
            "play",
            "opera",
            "musical",
            "ballet",
            "score",
            "symphony concerto",
            "poem",
            "painting",
            "game",
            "magazine newspaper journal");
    /** The prepositions that open a complement: two complements are compared only after the same one. */
    private static final Set<String> PREPOSITIONS = Set.of("in", "of", "by", "from", "at", "on", "near", "for");
    /** The slot of complements in parentheses (a title's qualifier lands there). */
    private static final String ASIDE_SLOT = "aside";
    /** Capitalized words that are not qualifiers: articles and the like at the start of a description. */
    private static final Set<String> NOT_QUALIFIERS = Set.of("the", "a", "an", "its", "his", "her", "their", "one");
    /** Longer descriptions are read up to here: the parts that tell referents apart come first. */
    private static final int MAX_WORDS = 24;

    public DescriptionSense {
        years = new TreeSet<>(years);
        qualifiers = new TreeSet<>(qualifiers);
        complements = new TreeSet<>(complements);
        words = Set.copyOf(words);
    }

    /** The sense of a description as an extractor wrote it. */
    public static DescriptionSense of(String description) {
        if (description == null || description.isBlank()) {
            return NONE;
        }
        // the description proper, and what it says in parentheses ("song (Filter)", "film (1966)")
        StringBuilder main = new StringBuilder();
        StringBuilder asides = new StringBuilder();
        int depth = 0;
        for (int i = 0; i < description.length(); i++) {
            char c = description.charAt(i);
            if (c == '(' || c == ')') {
                depth = Math.max(0, depth + (c == '(' ? 1 : -1));
                asides.append(' ');
                main.append(' ');
            } else {
                (depth > 0 ? asides : main).append(c);
            }
        }
        Parts parts = new Parts();
        parts.read(main.toString());
        String head = parts.head;
        // an aside only qualifies: every proper word in it places the referent, in a slot of its own
        parts.head = "";
        parts.headDone = true;
        parts.clause = false;
        parts.slot = ASIDE_SLOT;
        parts.read(asides.toString());
        if (head.isEmpty()) {
            Parts fallback = new Parts();
            fallback.read(asides.toString());
            head = fallback.head; // "(1966 film)" alone: its noun is the head
        }
        return new DescriptionSense(head, parts.years, parts.qualifiers, parts.complements, Set.copyOf(parts.words));
    }

    /** What one reading of description text collects. */
    private static final class Parts {
        String head = "";
        boolean headDone;
        boolean clause;
        /** What the proper words read now say of the referent: the preposition before them, or the aside. */
        String slot = "";

        final SortedSet<String> years = new TreeSet<>();
        final SortedSet<String> qualifiers = new TreeSet<>();
        final SortedSet<String> complements = new TreeSet<>();
        final List<String> words = new ArrayList<>();

        void read(String text) {
            int n = 0;
            for (String t : UnicodeText.words(text.strip())) {
                if (t.isEmpty()) {
                    continue;
                }
                if (++n > MAX_WORDS) {
                    break;
                }
                String lower = t.toLowerCase(Locale.ROOT);
                if (YEAR.matcher(t).matches()) {
                    years.add(t);
                    continue;
                }
                if (Character.isUpperCase(t.codePointAt(0))) {
                    if (NOT_QUALIFIERS.contains(lower)) {
                        continue;
                    }
                    if (!headDone) {
                        qualifiers.add(lower);
                    } else if (!clause && !slot.isEmpty() && lower.length() >= 2) {
                        complements.add(slot + ":" + lower);
                    }
                    continue;
                }
                if (!Character.isLetter(t.codePointAt(0))) {
                    continue;
                }
                words.add(lower);
                clause |= CLAUSE.contains(lower);
                if (STOP.contains(lower)) {
                    headDone = true;
                } else if (!headDone) {
                    head = lower;
                }
                if (headDone && !slot.equals(ASIDE_SLOT) && PREPOSITIONS.contains(lower)) {
                    slot = lower;
                }
            }
        }
    }

    /** True for the sense of a mention without a description that tells anything: it stands for the bare name. */
    public boolean isNone() {
        return head.isEmpty() && years.isEmpty() && qualifiers.isEmpty() && complements.isEmpty();
    }

    /** The key that makes mentions with this sense one surface entity; empty for none. */
    public String key() {
        if (isNone()) {
            return "";
        }
        String key = head + "|" + String.join(" ", years) + "|" + String.join(" ", qualifiers);
        // without complements the key is what it was before they were read, so existing surfaces keep their ids
        return complements.isEmpty() ? key : key + "|" + String.join(" ", complements);
    }

    /**
     * Why the two senses name different referents, or null when nothing in them says so: both name years and none
     * is shared, both name proper qualifiers and none is shared, both name proper complements in one slot and none there is shared, both heads are different kinds of work, or neither head noun is among the other's words
     * while their embeddings do not agree either ({@code embeddingsAgree}, asked only then).
     */
    public String conflict(DescriptionSense other, BooleanSupplier embeddingsAgree) {
        if (isNone() || other.isNone()) {
            return null;
        }
        if (!years.isEmpty() && !other.years.isEmpty() && disjoint(years, other.years)) {
            return "different years: " + String.join(" ", years) + " / " + String.join(" ", other.years);
        }
        if (!qualifiers.isEmpty() && !other.qualifiers.isEmpty() && disjoint(qualifiers, other.qualifiers)) {
            return "different qualifiers: " + String.join(" ", qualifiers) + " / " + String.join(" ", other.qualifiers);
        }
        for (String slot : slots(complements)) {
            SortedSet<String> mine = inSlot(complements, slot);
            SortedSet<String> theirs = inSlot(other.complements, slot);
            if (!theirs.isEmpty() && disjoint(mine, theirs)) {
                return "different places or makers: " + String.join(" ", mine) + " / " + String.join(" ", theirs);
            }
        }
        String kind = WORK_KINDS.get(head);
        String otherKind = WORK_KINDS.get(other.head);
        if (kind != null && otherKind != null && !kind.equals(otherKind)) {
            return "different kinds of work: " + head + " / " + other.head;
        }
        if (!head.isEmpty()
                && !other.head.isEmpty()
                && !other.words.contains(head)
                && !words.contains(other.head)
                && !embeddingsAgree.getAsBoolean()) {
            return "different kinds: " + head + " / " + other.head;
        }
        return null;
    }

    /** True when the two senses conflict (see {@link #conflict}). */
    public boolean conflicts(DescriptionSense other, BooleanSupplier embeddingsAgree) {
        return conflict(other, embeddingsAgree) != null;
    }

    private static SortedSet<String> slots(SortedSet<String> complements) {
        SortedSet<String> slots = new TreeSet<>();
        complements.forEach(c -> slots.add(c.substring(0, c.indexOf(':'))));
        return slots;
    }

    private static SortedSet<String> inSlot(SortedSet<String> complements, String slot) {
        return complements.subSet(slot + ":", slot + ";"); // ';' sorts right after ':'
    }

    private static Map<String, String> kinds(String... lines) {
        Map<String, String> kinds = new HashMap<>();
        for (String line : lines) {
            for (String noun : line.split(" ")) {
                kinds.put(noun, line);
            }
        }
        return Map.copyOf(kinds);
    }

    private static boolean disjoint(Set<String> a, Set<String> b) {
        for (String x : a) {
            if (b.contains(x)) {
                return false;
            }
        }
        return true;
    }
}
