package dev.engram.stores;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * What a mention's description says about which referent it names, in the few parts that tell namesakes apart: the
 * head noun of the description ("footballer" in "Scottish former footballer who played for Hibernian"), the years it
 * names ("2017" in "2017 British drama film") and its proper qualifiers ("Scottish", "British"). Two mentions of one
 * name whose senses differ in these parts are told apart before any resolution; two whose senses {@link #conflicts
 * conflict} are different referents by the description alone.
 *
 * <p>A sense is a pure function of the description, so the surface entity a mention belongs to is a function of the
 * mention alone, whatever order mentions arrive in. A mention without a description (or whose description holds none
 * of the three parts) has the empty sense and stands for the bare name.
 *
 * @param head the head noun, lower case; empty when the description has none
 * @param years four-digit years from 1000 to 2099
 * @param qualifiers capitalized words before the head, lower case ("Scottish", "British"): what kind of the head
 * @param words every lower-case word of the description, for telling whether one head is among the other's words
 */
public record DescriptionSense(String head, SortedSet<String> years, SortedSet<String> qualifiers, Set<String> words) {

    /** The sense of a mention without description. */
    public static final DescriptionSense NONE = new DescriptionSense("", new TreeSet<>(), new TreeSet<>(), Set.of());

    private static final Pattern TOKEN = Pattern.compile("[^\\p{L}\\p{N}]+");
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
    /** Capitalized words that are not qualifiers: articles and the like at the start of a description. */
    private static final Set<String> NOT_QUALIFIERS = Set.of("the", "a", "an", "its", "his", "her", "their", "one");
    /** Longer descriptions are read up to here: the parts that tell referents apart come first. */
    private static final int MAX_WORDS = 24;

    public DescriptionSense {
        years = new TreeSet<>(years);
        qualifiers = new TreeSet<>(qualifiers);
        words = Set.copyOf(words);
    }

    /** The sense of a description as an extractor wrote it. */
    public static DescriptionSense of(String description) {
        if (description == null || description.isBlank()) {
            return NONE;
        }
        String[] tokens = TOKEN.split(description.strip());
        String head = "";
        boolean headDone = false;
        SortedSet<String> years = new TreeSet<>();
        SortedSet<String> qualifiers = new TreeSet<>();
        List<String> words = new ArrayList<>();
        int n = 0;
        for (String t : tokens) {
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
                if (!headDone && !NOT_QUALIFIERS.contains(lower)) {
                    qualifiers.add(lower);
                }
                continue;
            }
            if (!Character.isLetter(t.codePointAt(0))) {
                continue;
            }
            words.add(lower);
            if (STOP.contains(lower)) {
                headDone = true;
            } else if (!headDone) {
                head = lower;
            }
        }
        return new DescriptionSense(head, years, qualifiers, Set.copyOf(words));
    }

    /** True for the sense of a mention without a description that tells anything: it stands for the bare name. */
    public boolean isNone() {
        return head.isEmpty() && years.isEmpty() && qualifiers.isEmpty();
    }

    /** The key that makes mentions with this sense one surface entity; empty for none. */
    public String key() {
        return isNone() ? "" : head + "|" + String.join(" ", years) + "|" + String.join(" ", qualifiers);
    }

    /**
     * Why the two senses name different referents, or null when nothing in them says so: both name years and none
     * is shared, both name proper qualifiers and none is shared, or neither head noun is among the other's words
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

    private static boolean disjoint(Set<String> a, Set<String> b) {
        for (String x : a) {
            if (b.contains(x)) {
                return false;
            }
        }
        return true;
    }
}
