package dev.engram.processors;

import com.google.re2j.Pattern;
import dev.engram.schemas.EntityType;
import dev.engram.stores.EntityNames;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The forms of an entity name that entity resolution compares and blocks on: tokens, a loose form (corporate
 * suffixes dropped, "st" read as "saint", no spaces), acronyms and initials, and the numbers a name carries ("World
 * War II" and "World War I" must never look alike).
 */
public final class NameForms {

    /** Words that do not make a name distinct and are too common to block on. */
    private static final Set<String> STOPWORDS = Set.of(
            "of", "the", "and", "for", "in", "on", "at", "de", "la", "le", "du", "von", "van", "der", "del", "a", "an",
            "to", "y", "da", "di", "el");

    /** A roman numeral up to 399 in lower case, or the empty string (which no caller asks about). */
    private static final Pattern ROMAN = Pattern.compile("c{0,3}(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})");

    /** Tokens that read as roman numerals but are usually names. */
    private static final Set<String> NOT_NUMERALS = Set.of("li", "c", "l", "cc", "lili");

    private static final Pattern DIGITS = Pattern.compile("\\d+");

    private NameForms() {}

    /** A name with every form resolution compares, computed once. */
    public record Name(
            String normalized,
            String written,
            List<String> tokens,
            String loose,
            String acronym,
            Set<String> initials,
            List<Integer> numbers,
            boolean blockable) {}

    public static Name parse(String normalized, String written) {
        return new Name(
                normalized,
                written,
                tokens(normalized),
                loose(normalized),
                asAcronym(normalized, written),
                initials(normalized),
                numbers(normalized),
                !blockingTokens(normalized).isEmpty());
    }

    /** The type classes that may hold the same referent: unknown ({@code OTHER}) goes with any. */
    public static EntityType typeClass(EntityType type) {
        return EntityNames.typeClass(type);
    }

    public static boolean compatible(EntityType a, EntityType b) {
        return a == b || a == EntityType.OTHER || b == EntityType.OTHER;
    }

    public static List<String> tokens(String normalized) {
        return EntityNames.tokens(normalized);
    }

    /** Tokens worth blocking on: not stopwords, at least three characters or a number. */
    public static List<String> blockingTokens(String normalized) {
        List<String> out = new ArrayList<>();
        for (String t : tokens(normalized)) {
            if (!STOPWORDS.contains(t) && (t.length() >= 3 || DIGITS.matcher(t).matches())) {
                out.add(t);
            }
        }
        return out;
    }

    /** Corporate suffixes and leading articles dropped, saint/mount/fort spelled out, spaces removed. */
    public static String loose(String normalized) {
        return EntityNames.loose(normalized);
    }

    /**
     * The acronym a name is written as, or null: one token of 2–6 letters written in capitals ("NASA", "CNN") or
     * single letters with dots ("U.S.", normalized to "u s").
     */
    public static String asAcronym(String normalized, String written) {
        List<String> tokens = tokens(normalized);
        if (tokens.size() == 1) {
            String t = tokens.get(0);
            if (t.length() >= 2 && t.length() <= 6 && t.chars().allMatch(Character::isLetter)) {
                String letters = written.codePoints()
                        .filter(Character::isLetter)
                        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                        .toString();
                if (letters.length() == t.length() && letters.chars().allMatch(Character::isUpperCase)) {
                    return t;
                }
            }
            return null;
        }
        if (tokens.size() >= 2 && tokens.size() <= 6 && tokens.stream().allMatch(t -> t.length() == 1)) {
            return String.join("", tokens);
        }
        return null;
    }

    /** The initials of a multi-word name, with and without its stopwords ("bank of america" → boa, ba). */
    public static Set<String> initials(String normalized) {
        List<String> tokens = tokens(normalized);
        Set<String> out = new LinkedHashSet<>();
        if (tokens.size() < 2) {
            return out;
        }
        StringBuilder all = new StringBuilder();
        StringBuilder content = new StringBuilder();
        for (String t : tokens) {
            all.append(t.charAt(0));
            if (!STOPWORDS.contains(t)) {
                content.append(t.charAt(0));
            }
        }
        if (content.length() >= 2) {
            out.add(content.toString());
        }
        if (all.length() <= 8) {
            out.add(all.toString());
        }
        return out;
    }

    /** The numbers in a name, digits and roman numerals alike ("world war ii" → [2]). */
    public static List<Integer> numbers(String normalized) {
        List<Integer> out = new ArrayList<>();
        List<String> tokens = tokens(normalized);
        for (int i = 0; i < tokens.size(); i++) {
            String t = tokens.get(i);
            if (DIGITS.matcher(t).matches() && t.length() <= 9) {
                out.add(Integer.parseInt(t));
            } else if (i > 0
                    && !t.isEmpty()
                    && t.length() <= 5
                    && ROMAN.matcher(t).matches()
                    && !NOT_NUMERALS.contains(t)) {
                out.add(roman(t)); // "henry viii", "world war i"; never a name's first word
            }
        }
        return out;
    }

    private static int roman(String s) {
        int total = 0;
        int previous = 0;
        for (int i = s.length() - 1; i >= 0; i--) {
            int v =
                    switch (s.charAt(i)) {
                        case 'i' -> 1;
                        case 'v' -> 5;
                        case 'x' -> 10;
                        case 'l' -> 50;
                        default -> 100;
                    };
            total += v < previous ? -v : v;
            previous = Math.max(previous, v);
        }
        return total;
    }

    /** Tokens that tell a father from a son: a name with one of them is not a longer form of the name without. */
    private static final Set<String> GENERATIONAL = Set.of("jr", "sr", "junior", "senior");

    /**
     * True when {@code part} is a shorter form of {@code whole}: its tokens in order, contiguous unless people's names
     * ("James Hetfield" in "James Alan Hetfield"), and the longer name adds no generational suffix.
     */
    public static boolean partOf(String whole, String part, boolean person) {
        return partOf(tokens(whole), tokens(part), person);
    }

    static boolean partOf(List<String> w, List<String> p, boolean person) {
        if (!containsTokens(w, p)) {
            return false;
        }
        for (String t : w) {
            if (GENERATIONAL.contains(t) && !p.contains(t)) {
                return false;
            }
        }
        if (person || Collections.indexOfSubList(w, p) >= 0) {
            return true;
        }
        // Otherwise only middle initials may be left out ("Ernest Bryan" in "Ernest E. Bryan").
        List<String> rest = new ArrayList<>(w);
        for (String t : p) {
            rest.remove(t);
        }
        return rest.stream().allMatch(t -> t.length() == 1) && w.get(0).equals(p.get(0));
    }

    /** True when every token of {@code p} appears, in order, as a whole token of {@code w}, and {@code w} has more. */
    static boolean containsTokens(List<String> w, List<String> p) {
        if (p.isEmpty() || p.size() >= w.size()) {
            return false;
        }
        int j = 0;
        for (int i = 0; i < w.size() && j < p.size(); i++) {
            if (w.get(i).equals(p.get(j))) {
                j++;
            }
        }
        return j == p.size();
    }
}
