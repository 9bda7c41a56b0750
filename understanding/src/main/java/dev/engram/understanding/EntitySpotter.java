package dev.engram.understanding;

import dev.engram.schemas.EntityMention;
import dev.engram.schemas.EntityType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rule-based entity spotting without a model: runs of capitalized words joined by short connectors ("University of
 * Oxford", "Ludwig van Beethoven"), quoted titles, and dates, each with its evidence span. Types come from simple
 * cues (honorifics, organization and place words, the preposition before the span).
 */
public final class EntitySpotter {

    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}][\\p{L}\\p{M}\\p{N}'’.&-]*");
    private static final Pattern DATE = Pattern.compile(
            "\\b(?:(?:January|February|March|April|May|June|July|August|September|October|November|December)"
                    + "(?:\\s+\\d{1,2},?)?\\s+)?(?:1[0-9]{3}|20[0-9]{2})\\b");
    private static final Pattern QUOTED = Pattern.compile("[\"“]([\\p{Lu}\\p{N}][^\"”\\n]{1,80}?)[\"”]");

    private static final Set<String> CONNECTORS = Set.of(
            "of", "the", "de", "del", "della", "der", "van", "von", "da", "di", "du", "la", "le", "and", "for", "&");
    /** Capitalized words that start sentences without naming anything. */
    private static final Set<String> SENTENCE_STARTERS = Set.of(
            "the",
            "a",
            "an",
            "in",
            "on",
            "at",
            "he",
            "she",
            "it",
            "they",
            "we",
            "i",
            "you",
            "this",
            "that",
            "these",
            "those",
            "his",
            "her",
            "its",
            "their",
            "our",
            "my",
            "after",
            "before",
            "during",
            "when",
            "while",
            "since",
            "although",
            "however",
            "there",
            "here",
            "as",
            "by",
            "for",
            "from",
            "with",
            "of",
            "to",
            "but",
            "and",
            "or",
            "if",
            "what",
            "which",
            "who",
            "whom",
            "whose",
            "where",
            "why",
            "how",
            "is",
            "was",
            "are",
            "were",
            "also",
            "both",
            "each",
            "all",
            "some",
            "many",
            "most",
            "other",
            "such",
            "one",
            "two",
            "not",
            "no",
            "then",
            "thus",
            "later",
            "today",
            "following",
            "according",
            "despite",
            "between",
            "among",
            "under",
            "over",
            "through");

    private static final Set<String> PERSON_CUES = Set.of(
            "mr",
            "mrs",
            "ms",
            "dr",
            "sir",
            "lady",
            "lord",
            "king",
            "queen",
            "prince",
            "princess",
            "president",
            "saint",
            "st",
            "pope",
            "general",
            "captain",
            "professor",
            "prof");
    private static final Set<String> ORGANIZATION_CUES = Set.of(
            "university",
            "college",
            "school",
            "company",
            "inc",
            "inc.",
            "corporation",
            "corp",
            "ltd",
            "llc",
            "group",
            "party",
            "club",
            "fc",
            "association",
            "institute",
            "records",
            "bank",
            "council",
            "committee",
            "agency",
            "ministry",
            "department",
            "army",
            "navy",
            "league",
            "union",
            "society",
            "foundation",
            "band",
            "church",
            "academy",
            "press",
            "studios",
            "network",
            "airlines",
            "railway");
    private static final Set<String> PLACE_CUES = Set.of(
            "city",
            "river",
            "county",
            "mountain",
            "mountains",
            "island",
            "islands",
            "lake",
            "street",
            "province",
            "state",
            "kingdom",
            "republic",
            "valley",
            "bay",
            "sea",
            "ocean",
            "park",
            "district",
            "region",
            "village",
            "town",
            "castle",
            "bridge",
            "station",
            "airport",
            "square",
            "hill",
            "desert",
            "forest",
            "coast");
    private static final Set<String> PLACE_PREPOSITIONS = Set.of("in", "at", "near", "from", "to");

    public List<EntityMention> spot(String text) {
        List<EntityMention> found = new ArrayList<>();
        addDates(text, found);
        addQuotedTitles(text, found);
        addProperNounRuns(text, found);
        return removeOverlaps(found);
    }

    private static void addDates(String text, List<EntityMention> out) {
        Matcher m = DATE.matcher(text);
        while (m.find()) {
            out.add(new EntityMention(m.group(), EntityType.DATE, m.start(), m.end()));
        }
    }

    private static void addQuotedTitles(String text, List<EntityMention> out) {
        Matcher m = QUOTED.matcher(text);
        while (m.find()) {
            String title = m.group(1).strip();
            if (!title.isEmpty() && !title.endsWith(".") && !title.endsWith(",")) {
                out.add(new EntityMention(title, EntityType.WORK, m.start(1), m.start(1) + title.length()));
            }
        }
    }

    private static void addProperNounRuns(String text, List<EntityMention> out) {
        List<int[]> words = new ArrayList<>();
        Matcher m = WORD.matcher(text);
        while (m.find()) {
            int end = m.end();
            while (end > m.start()
                    && ".'’-&".indexOf(text.charAt(end - 1)) >= 0
                    && !isAbbreviation(text, m.start(), end)) {
                end--;
            }
            if (end > m.start()) {
                words.add(new int[] {m.start(), end});
            }
        }
        int i = 0;
        while (i < words.size()) {
            if (!isCapitalized(text, words.get(i)) || isSentenceStarterWord(text, words, i)) {
                i++;
                continue;
            }
            int first = i;
            int last = i;
            int j = i + 1;
            while (j < words.size() && adjacent(text, words.get(j - 1), words.get(j))) {
                if (isCapitalized(text, words.get(j))) {
                    last = j;
                    j++;
                } else if (CONNECTORS.contains(lower(text, words.get(j)))
                        && j + 1 < words.size()
                        && adjacent(text, words.get(j), words.get(j + 1))
                        && isCapitalized(text, words.get(j + 1))) {
                    j++;
                } else {
                    break;
                }
            }
            int start = words.get(first)[0];
            int end = words.get(last)[1];
            String name = text.substring(start, end);
            if (name.length() >= 2 && !isAllDigits(name)) {
                out.add(new EntityMention(name, type(text, words, first, last), start, end));
            }
            i = last + 1;
        }
    }

    private static boolean isAbbreviation(String text, int start, int end) {
        String w = text.substring(start, end);
        return w.endsWith(".") && w.length() <= 4 && Character.isUpperCase(w.charAt(0));
    }

    private static boolean adjacent(String text, int[] a, int[] b) {
        for (int k = a[1]; k < b[0]; k++) {
            char c = text.charAt(k);
            if (c != ' ' && c != '\u00a0' && c != '.') {
                return false;
            }
        }
        return b[0] - a[1] <= 2;
    }

    private static boolean isCapitalized(String text, int[] w) {
        char c = text.charAt(w[0]);
        return Character.isUpperCase(c) || (Character.isDigit(c) && w[1] - w[0] > 1 && hasUpper(text, w));
    }

    private static boolean hasUpper(String text, int[] w) {
        for (int k = w[0]; k < w[1]; k++) {
            if (Character.isUpperCase(text.charAt(k))) {
                return true;
            }
        }
        return false;
    }

    /** A capitalized function word at the start of a sentence is not a name. */
    private static boolean isSentenceStarterWord(String text, List<int[]> words, int i) {
        String w = lower(text, words.get(i));
        if (!SENTENCE_STARTERS.contains(w)) {
            return false;
        }
        int k = words.get(i)[0] - 1;
        while (k >= 0 && Character.isWhitespace(text.charAt(k))) {
            k--;
        }
        boolean sentenceStart = k < 0 || ".!?:;\"“(\n".indexOf(text.charAt(k)) >= 0;
        return sentenceStart || w.length() <= 3;
    }

    private static EntityType type(String text, List<int[]> words, int first, int last) {
        String head = lower(text, words.get(first));
        if (PERSON_CUES.contains(head.replace(".", ""))) {
            return EntityType.PERSON;
        }
        for (int k = first; k <= last; k++) {
            String w = lower(text, words.get(k));
            if (ORGANIZATION_CUES.contains(w)) {
                return EntityType.ORGANIZATION;
            }
            if (PLACE_CUES.contains(w)) {
                return EntityType.PLACE;
            }
        }
        if (first > 0 && PLACE_PREPOSITIONS.contains(lower(text, words.get(first - 1))) && first == last) {
            return EntityType.PLACE;
        }
        return EntityType.OTHER;
    }

    private static String lower(String text, int[] w) {
        return text.substring(w[0], w[1]).toLowerCase(Locale.ROOT);
    }

    private static boolean isAllDigits(String s) {
        return s.chars().allMatch(c -> Character.isDigit(c) || c == ' ');
    }

    /** Keeps the longest of overlapping mentions; ties go to the earlier one. */
    private static List<EntityMention> removeOverlaps(List<EntityMention> mentions) {
        List<EntityMention> sorted = new ArrayList<>(mentions);
        sorted.sort(Comparator.comparingInt((EntityMention e) -> e.end() - e.start())
                .reversed()
                .thenComparingInt(EntityMention::start));
        List<EntityMention> kept = new ArrayList<>();
        for (EntityMention e : sorted) {
            boolean overlaps = kept.stream().anyMatch(k -> e.start() < k.end() && k.start() < e.end());
            if (!overlaps) {
                kept.add(e);
            }
        }
        kept.sort(Comparator.comparingInt(EntityMention::start));
        return kept;
    }
}
