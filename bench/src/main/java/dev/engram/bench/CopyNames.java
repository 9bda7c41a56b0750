package dev.engram.bench;

import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The names of a corpus's disjoint copies: in copy {@code k}, every capitalized word that is not common across the
 * corpus becomes a made-up word of its own ({@code Babbage} → {@code Vorekitu}), the same word wherever copy {@code k}
 * uses it, so that the copy's entities are named consistently and are its own.
 *
 * <p>The made-up words of two copies are unrelated strings: a suffix ({@code Babbageq3}, {@code Babbageq17}) would make
 * every entity of one copy a near spelling of the same entity in every other copy, and entity resolution rightly
 * merges names that close when their contexts agree, which joins the copies into one ever-growing entity per name
 * instead of the disjoint entities a larger corpus has.
 */
final class CopyNames {

    static final Pattern CAPITALIZED = Pattern.compile("\\b[A-Z][a-z]{2,}\\b");

    private static final String CONSONANTS = "bcdfghjklmnprstvz";
    private static final String VOWELS = "aeiou";

    private final Set<String> common;
    private final Map<String, String> made = new ConcurrentHashMap<>();
    private final Map<String, String> original = new ConcurrentHashMap<>();

    /** @param common words every copy keeps as they are (countries, months, ...), so that they gather passages */
    CopyNames(Set<String> common) {
        this.common = Set.copyOf(common);
    }

    /** Copy {@code k}'s text: every uncommon capitalized word renamed. */
    String rename(String text, int k) {
        Matcher m = CAPITALIZED.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String w = m.group();
            m.appendReplacement(out, common.contains(w) ? w : word(w, k));
        }
        return m.appendTail(out).toString();
    }

    /** The text a copy's text was made from (a text without made-up words is its own original). */
    String original(String text) {
        Matcher m = CAPITALIZED.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, original.getOrDefault(m.group(), m.group()));
        }
        return m.appendTail(out).toString();
    }

    /**
     * About how much heap the made-up words hold, with the words they stand for: the benchmark's own, which grows with
     * every copy (some 1.2 KB per passage of the copies) and which its memory figures set apart from the service's.
     */
    long heapBytes() {
        long bytes = 0;
        for (Map.Entry<String, String> e : made.entrySet()) {
            // an entry of each map, the key of the first ("k word"), the made-up word (the key of the second) and
            // the word it stands for (the value of the second)
            bytes += 2 * 48 + 3 * 48L + e.getKey().length() + 2L * e.getValue().length();
        }
        return bytes;
    }

    /** Copy {@code k}'s word for {@code w}: made once, then the same; never a word of the corpus or another's. */
    private String word(String w, int k) {
        return made.computeIfAbsent(k + " " + w, key -> {
            for (int attempt = 0; ; attempt++) {
                String candidate = madeUp(w, k, attempt);
                if (!common.contains(candidate) && original.putIfAbsent(candidate, w) == null) {
                    return candidate;
                }
            }
        });
    }

    /** A pronounceable word a little longer than {@code w}, from a seed of the word, the copy and the attempt. */
    static String madeUp(String w, int k, int attempt) {
        SplittableRandom r = new SplittableRandom(((long) w.hashCode() << 32) ^ (31L * k + attempt));
        int length = Math.max(6, w.length() + 2);
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            String letters = i % 2 == 0 ? CONSONANTS : VOWELS;
            sb.append(letters.charAt(r.nextInt(letters.length())));
        }
        sb.setCharAt(0, Character.toUpperCase(sb.charAt(0)));
        return sb.toString();
    }
}
