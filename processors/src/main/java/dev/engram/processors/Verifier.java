package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Conversation;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.understanding.RelativeTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * VERIFY: what an extractor proposes enters memory only if the passage supports it. Evidence must be anchored (every
 * span inside the passage and showing the entity's name or an alias; a fact's evidence inside the passage), names
 * must pass a quality gate (RAGA §3.3.5: length, printable ratio, sentence fragments, code, formulas, punctuation
 * floods, garbled text, generic headings), and a fact must relate two accepted entities. Rejections are kept, with
 * their reason, for review.
 */
public final class Verifier {

    /** What verification kept, aligned with the extraction: indices of kept entities and facts, and rejections. */
    public record Verified(List<Integer> entities, List<Integer> facts, List<Rejection> rejections) {}

    /** A rejected entity or fact and why. */
    public record Rejection(Meters.RejectedKind kind, String subject, String reason) {}

    private static final Set<String> GENERIC_HEADINGS = Set.of(
            "introduction",
            "conclusion",
            "conclusions",
            "abstract",
            "summary",
            "references",
            "contents",
            "table of contents",
            "appendix",
            "chapter",
            "section",
            "figure",
            "table",
            "overview",
            "background",
            "notes",
            "see also",
            "external links",
            "bibliography",
            "index",
            "preface",
            "acknowledgements");
    private static final Pattern CODE = Pattern.compile("[{}<>;]|::|->|\\(\\)|\\w+\\(.*\\)|==");
    private static final Pattern FORMULA = Pattern.compile("\\d\\s*[=^*/+]\\s*\\w|\\w\\s*[=^]\\s*\\w|[∑∫√≤≥±]");
    private static final Pattern PUNCTUATION_RUN = Pattern.compile("[\\p{Punct}&&[^.'&-]]{3,}|\\.{4,}");
    private static final Pattern REPEATED_CHAR = Pattern.compile("(.)\\1{3,}");
    private static final Pattern LONG_WORD_WITHOUT_VOWEL =
            Pattern.compile("\\b[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{6,}\\b");

    private Verifier() {}

    public static Verified verify(String text, Extraction x) {
        return verify(text, x, Circumstances.NONE);
    }

    /**
     * What a passage's text means beyond its words: who says it and to whom (a conversation's turn), and what its
     * relative times ("yesterday") resolve to on the day it was written. An entity they name is anchored by them.
     */
    public record Circumstances(Set<String> people, Map<Span, String> times) {
        public static final Circumstances NONE = new Circumstances(Set.of(), Map.of());

        /** The circumstances of a passage: its speaker and addressee, and its relative times resolved. */
        public static Circumstances of(PassageEvent.Upsert passage) {
            Conversation c = passage.conversation();
            if (c == null) {
                return NONE;
            }
            Set<String> people = new HashSet<>();
            people.add(key(c.speaker()));
            if (c.addressee() != null) {
                people.add(key(c.addressee()));
            }
            Map<Span, String> times = new HashMap<>();
            if (passage.eventTime() != null) {
                for (RelativeTime.Resolved r : RelativeTime.find(
                        passage.text(),
                        passage.eventTime().atZone(ZoneOffset.UTC).toLocalDate())) {
                    times.put(new Span(r.start(), r.end()), key(r.label()));
                }
            }
            return new Circumstances(Set.copyOf(people), Map.copyOf(times));
        }
    }

    /** {@link #verify(String, Extraction)} of a passage with its circumstances. */
    public static Verified verify(String text, Extraction x, Circumstances circumstances) {
        List<Integer> entities = new ArrayList<>();
        List<Rejection> rejections = new ArrayList<>();
        Set<String> accepted = new HashSet<>();
        for (int i = 0; i < x.entities().size(); i++) {
            Extraction.Entity e = x.entities().get(i);
            String reason = quality(e);
            if (reason == null) {
                reason = anchoring(text, e, circumstances);
            }
            if (reason != null) {
                rejections.add(new Rejection(Meters.RejectedKind.ENTITY, e.name(), reason));
                continue;
            }
            entities.add(i);
            accepted.add(key(e.name()));
            e.aliases().forEach(a -> accepted.add(key(a)));
        }
        List<Integer> facts = new ArrayList<>();
        for (int i = 0; i < x.facts().size(); i++) {
            Extraction.Fact f = x.facts().get(i);
            String reason = null;
            if (f.head().isBlank() || f.relation().isBlank() || f.tail().isBlank()) {
                reason = "incomplete fact";
            } else if (!accepted.contains(key(f.head())) || !accepted.contains(key(f.tail()))) {
                reason = "relates an entity that is not accepted";
            } else if (key(f.head()).equals(key(f.tail()))) {
                reason = "relates an entity to itself";
            } else if (f.evidence() == null || !inside(f.evidence(), text)) {
                reason = "evidence not found in the passage";
            }
            if (reason != null) {
                rejections.add(new Rejection(Meters.RejectedKind.FACT, f.text(), reason));
            } else {
                facts.add(i);
            }
        }
        return new Verified(entities, facts, rejections);
    }

    /** The quality gate; null when the name passes. */
    static String quality(Extraction.Entity e) {
        String name = e.name().strip();
        if (name.length() < 2 && !(e.type() == EntityType.NUMBER && !name.isEmpty())) {
            return "name too short";
        }
        if (name.length() > 120) {
            return "name too long";
        }
        if (name.split("\\s+").length > 10 || (name.endsWith(".") && name.split("\\s+").length > 4)) {
            return "sentence fragment";
        }
        if (CODE.matcher(name).find()) {
            return "looks like code";
        }
        if (FORMULA.matcher(name).find()) {
            return "looks like a formula";
        }
        if (PUNCTUATION_RUN.matcher(name).find()) {
            return "punctuation flood";
        }
        long printable = name.codePoints()
                .filter(c -> Character.isLetterOrDigit(c) || Character.isSpaceChar(c) || ".,'’&-()/:".indexOf(c) >= 0)
                .count();
        if (printable < 0.9 * name.codePointCount(0, name.length())) {
            return "too few printable characters";
        }
        if (REPEATED_CHAR.matcher(name).find()
                || LONG_WORD_WITHOUT_VOWEL.matcher(name).find()) {
            return "garbled text";
        }
        if (GENERIC_HEADINGS.contains(name.toLowerCase(Locale.ROOT))) {
            return "generic heading";
        }
        return null;
    }

    /**
     * Null when every span lies inside the passage and shows the name or an alias, and there is at least one; a
     * conversation's speaker or addressee needs no span (the turn is theirs), and a span that holds a relative time
     * shows the date it resolves to.
     */
    static String anchoring(String text, Extraction.Entity e, Circumstances circumstances) {
        if (e.spans().isEmpty()) {
            return circumstances.people().contains(key(e.name())) ? null : "no evidence span in the passage";
        }
        Set<String> forms = new HashSet<>();
        forms.add(key(e.name()));
        e.aliases().forEach(a -> forms.add(key(a)));
        for (Span s : e.spans()) {
            if (!inside(s, text)) {
                return "evidence span does not show the entity";
            }
            boolean shows = forms.contains(key(text.substring(s.start(), s.end())))
                    || key(e.name()).equals(circumstances.times().get(s));
            if (!shows) {
                return "evidence span does not show the entity";
            }
        }
        return null;
    }

    private static boolean inside(Span s, String text) {
        return s.end() <= text.length() && s.start() < s.end();
    }

    private static String key(String s) {
        return s.strip().toLowerCase(Locale.ROOT);
    }
}
