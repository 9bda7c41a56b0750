package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.stores.DescriptionSense;
import dev.engram.stores.PairDecision;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.commons.text.similarity.JaroWinklerSimilarity;

/**
 * VERIFY for entity resolution: whether two surface entities that share a blocking key are one referent. A decision
 * depends only on the two surfaces, on how many other surfaces the shorter one could equally stand for, and on the
 * context both share, never on the order things arrived in. Wrong merges cost more than missed ones, so every rule
 * that reads a short or similar name as a longer one needs that name to be unambiguous, and people named alike need
 * supporting evidence (a shared document or a co-mentioned entity).
 */
public final class PairRules {

    /** Jaro-Winkler similarity of the loose forms at which two names read as spelling variants. */
    static final double FUZZY = 0.93;
    /** Cosine of "name: description" embeddings at which two differently-named surfaces are shown for review. */
    static final double EMBEDDING_REVIEW = 0.9;
    /** Cosine at which the embeddings count as supporting evidence for a similar-name merge. */
    static final double EMBEDDING_SUPPORT = 0.85;
    /** Short forms that could stand for more surfaces than this are not even shown for review. */
    static final int MAX_REVIEWED_AMBIGUITY = 3;

    private static final JaroWinklerSimilarity JARO_WINKLER = new JaroWinklerSimilarity();

    private PairRules() {}

    /**
     * What a decision reads about one surface entity; its embedding is loaded only when a rule needs it, and {@code
     * lsh} (its hash buckets) tells whether two embeddings can be close at all.
     */
    public record Surface(
            String id,
            NameForms.Name name,
            EntityType type,
            Set<String> aliases,
            Set<Integer> lsh,
            Supplier<float[]> embedding,
            String description) {

        public Surface {
            description = description == null ? "" : description;
        }

        /** A surface without description. */
        public Surface(
                String id,
                String normalized,
                String written,
                EntityType type,
                Set<String> aliases,
                Set<Integer> lsh,
                Supplier<float[]> embedding) {
            this(id, NameForms.parse(normalized, written), type, aliases, lsh, embedding, "");
        }

        /** Which referent the description says this surface names; none without one. */
        public DescriptionSense sense() {
            return DescriptionSense.of(description);
        }

        public String normalized() {
            return name.normalized();
        }

        public String written() {
            return name.written();
        }

        public float[] vector() {
            return embedding == null ? null : embedding.get();
        }
    }

    /** How a short name relates to a longer one: the families a short form can be ambiguous within. */
    public enum ShortForm {
        VARIANT,
        ACRONYM,
        ALIAS,
        PARTIAL
    }

    /** What the resolver looks up for a decision: ambiguity counts and shared context. */
    public interface Lookup {
        /** The number of surfaces (other than {@code shortSide}) that {@code shortSide} matches as this family. */
        int ambiguity(Surface shortSide, ShortForm family);

        /** What the two surfaces share of their context (documents, sessions, co-mentioned entities, passages). */
        SharedContext shared(Surface a, Surface b);

        /**
         * How many referents the described surfaces of {@code bare}'s name (same loose form, compatible type) stand
         * for: the groups of them whose descriptions do not conflict.
         */
        int referents(Surface bare);
    }

    /**
     * A decision about a pair: its kind, the rule (the family of names it read) and score, the evidence shown with it,
     * and the features the merge score read (empty where a rule decided alone).
     */
    public record Decision(
            PairDecision.Kind decision,
            String rule,
            double score,
            List<String> evidence,
            Map<String, Double> features) {

        public Decision {
            features = features == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(features));
        }

        Decision(PairDecision.Kind decision, String rule, double score, List<String> evidence) {
            this(decision, rule, score, evidence, Map.of());
        }
    }

    /**
     * Rules whose decision stands whatever the score: two types that cannot be one thing, descriptions that name two
     * referents, a short name that could stand for several entities, and names alike only in their embeddings.
     */
    static final Set<String> CONSTRAINTS = Set.of("type_conflict", "namesake", "ambiguous", "embedding");

    /** How {@code shortSide} could stand for {@code longSide}, or null; used for decisions and ambiguity counts. */
    public static ShortForm shortForm(Surface shortSide, Surface longSide) {
        if (shortSide.id().equals(longSide.id())) {
            return null;
        }
        NameForms.Name s = shortSide.name();
        NameForms.Name l = longSide.name();
        if (s.loose().equals(l.loose())) {
            return shortSide.type() == EntityType.OTHER || longSide.type() == EntityType.OTHER
                    ? ShortForm.VARIANT
                    : null;
        }
        if (s.acronym() != null && l.acronym() == null && l.initials().contains(s.acronym())) {
            return ShortForm.ACRONYM;
        }
        // Part of the name before declared alias: a surname stays a partial name (it needs context) even when an
        // extractor declared it an alias of the full name somewhere else. The parts of an identifier are none:
        // "PLAINTEXT" is no short form of "SASL_PLAINTEXT", nor "retention.ms" of "log.retention.ms".
        // And a part of a name ends where the name ends, at its head: "Scorsese" of "Martin Scorsese", "Streams" of
        // "Kafka Streams". What only opens a longer name modifies its head and names something else: "Houston" is no
        // short form of "Houston Astros", nor "ZooKeeper" of "ZooKeeper Security Migration Tool", nor "Sara" of
        // "Sara Bareilles".
        if (!identifier(shortSide.written())
                && !identifier(longSide.written())
                && s.tokens().size() < l.tokens().size()
                && s.blockable()
                && l.numbers().equals(s.numbers())
                && endsAlike(s.tokens(), l.tokens())
                && NameForms.partOf(l.tokens(), s.tokens(), person(shortSide, longSide))) {
            return ShortForm.PARTIAL;
        }
        if (longSide.aliases().contains(shortSide.normalized())) {
            return ShortForm.ALIAS;
        }
        return null;
    }

    /** Whether two names end in the same token: the head of an English name is its last word. */
    private static boolean endsAlike(List<String> shortTokens, List<String> longTokens) {
        return !shortTokens.isEmpty()
                && !longTokens.isEmpty()
                && shortTokens.get(shortTokens.size() - 1).equals(longTokens.get(longTokens.size() - 1));
    }

    /**
     * A name written as one identifier of code or configuration, with no space: an underscore, or two or more dots
     * between letters ({@code SASL_PLAINTEXT}, {@code log.retention.ms}; not {@code Amazon.com}). Its parts are not
     * names of it, unless declared its aliases.
     */
    static boolean identifier(String written) {
        if (written.indexOf(' ') >= 0) {
            return false;
        }
        int dots = 0;
        for (int i = 0; i < written.length(); i++) {
            char c = written.charAt(i);
            if (c == '_') {
                return true;
            }
            if (c == '.'
                    && i > 0
                    && i + 1 < written.length()
                    && Character.isLetter(written.charAt(i - 1))
                    && Character.isLetter(written.charAt(i + 1))) {
                dots++;
            }
        }
        return dots >= 2;
    }

    private static boolean person(Surface a, Surface b) {
        return a.type() == EntityType.PERSON || b.type() == EntityType.PERSON;
    }

    /** Decides a pair by the rules alone, as {@link MergeModel#RULES} does. */
    public static Optional<Decision> decide(Surface a, Surface b, Lookup lookup) {
        return decide(a, b, lookup, MergeModel.RULES);
    }

    /**
     * Decides a pair: the rules find how the names relate and apply the {@link #CONSTRAINTS}; where no constraint
     * decides, the merge score does — a merge when the model's probability is at least {@link MergeModel#MERGE_AT}, and
     * otherwise the rules' review or deferral (review where the rules alone would merge). With {@link
     * MergeModel#RULES}, the rules' decision stands, with the features shown.
     */
    public static Optional<Decision> decide(Surface a, Surface b, Lookup lookup, MergeModel model) {
        Lookup once = new OneShared(lookup);
        Optional<Decision> byRules = rules(a, b, once);
        if (byRules.isEmpty() || CONSTRAINTS.contains(byRules.get().rule())) {
            return byRules;
        }
        Decision d = byRules.get();
        Map<String, Double> features = MergeFeatures.of(a, b, once);
        if (model.byRulesAlone()) {
            return Optional.of(new Decision(d.decision(), d.rule(), d.score(), d.evidence(), features));
        }
        double p = model.probability(features);
        String withheld = withheld(features);
        boolean merge = p >= MergeModel.MERGE_AT && withheld == null;
        List<String> evidence = new ArrayList<>(d.evidence());
        evidence.add(String.format(
                Locale.ROOT,
                "merge score %.3f %s %.2f (%s)",
                p,
                p >= MergeModel.MERGE_AT ? "at or above" : "below",
                MergeModel.MERGE_AT,
                model.id()));
        if (withheld != null && p >= MergeModel.MERGE_AT) {
            evidence.add("not merged: " + withheld);
        }
        PairDecision.Kind kind = merge
                ? PairDecision.Kind.MERGE
                : d.decision() == PairDecision.Kind.MERGE ? PairDecision.Kind.REVIEW : d.decision();
        return Optional.of(new Decision(kind, d.rule(), p, evidence, features));
    }

    /**
     * Why a pair may not merge whatever its score, or null: knowledge no labelled source holds enough examples of to
     * be learned, so a score fit without such examples would not have it. Descriptions that name two referents keep
     * them apart outside one document; and a name that is only part of the other, alike to it, or bare beside a
     * described one merges only with evidence beyond the name (a shared document, session, co-mentioned entity or
     * passage, descriptions that agree, or for a part of a name or an alike name of several words, embeddings of name
     * and description that agree).
     * An acronym, a declared alias and one name written two ways need none.
     */
    static String withheld(Map<String, Double> f) {
        // one document (a conversation's turn), not only one session
        boolean oneDocument = feature(f, MergeFeatures.ONE_DOCUMENT) > 0;
        if (feature(f, "descriptions_conflict") > 0 && !oneDocument) {
            return "their descriptions name different referents";
        }
        boolean nameOnly = feature(f, "partial") > 0
                || feature(f, "similar") > 0
                || feature(f, "one_described") > 0
                || (feature(f, "same_name") > 0 && feature(f, "untyped") > 0 && feature(f, "one_word") > 0);
        boolean beyondName = feature(f, "same_document") > 0 // a document, or a conversation's session
                || feature(f, "co_mentioned") > 0
                || feature(f, "places") >= 2 / 3.0
                || feature(f, "passage_cosine") >= SharedContext.ALIKE_PASSAGES
                || feature(f, "descriptions_agree") > 0
                // a part of a name, or an alike name, of more than one word whose "name: description" embeddings
                // agree, as the rules read them (a bare name beside a described one needs shared context)
                || ((feature(f, "partial") > 0 || feature(f, "similar") > 0)
                        && feature(f, "one_word") == 0
                        && feature(f, "description_cosine") >= EMBEDDING_SUPPORT);
        return nameOnly && !beyondName ? "nothing beyond the name says they are one" : null;
    }

    /** A feature's value; absent is zero (a stored decision keeps only the features that are not). */
    private static double feature(Map<String, Double> f, String name) {
        Double v = f.get(name);
        return v == null ? 0 : v;
    }

    /** A lookup that reads the shared context of the pair being decided once. */
    private static final class OneShared implements Lookup {
        private final Lookup delegate;
        private SharedContext shared;

        OneShared(Lookup delegate) {
            this.delegate = delegate;
        }

        @Override
        public int ambiguity(Surface shortSide, ShortForm family) {
            return delegate.ambiguity(shortSide, family);
        }

        @Override
        public SharedContext shared(Surface a, Surface b) {
            if (shared == null) {
                shared = delegate.shared(a, b);
            }
            return shared;
        }

        @Override
        public int referents(Surface bare) {
            return delegate.referents(bare);
        }
    }

    private static Optional<Decision> rules(Surface a, Surface b, Lookup lookup) {
        boolean compatible = NameForms.compatible(a.type(), b.type());
        String looseA = a.name().loose();
        String looseB = b.name().loose();
        if (looseA.equals(looseB)) {
            List<String> evidence = List.of("same name once case, punctuation, articles and suffixes are ignored: "
                    + quoted(a.written()) + " / " + quoted(b.written()));
            if (!compatible) {
                return review("type_conflict", 0.5, evidence, typeEvidence(a, b));
            }
            if (!a.sense().isNone() || !b.sense().isNone()) {
                return sameName(a, b, evidence, lookup);
            }
            if (a.type() == b.type()) {
                return Optional.of(new Decision(PairDecision.Kind.MERGE, "variant", 0.95, evidence));
            }
            // One side's type unknown: a one-word name may be a place and a person ("Washington", "Jackson"), so the
            // contexts decide; a longer name is seldom two things of different kinds.
            boolean oneWord =
                    Math.min(a.name().tokens().size(), b.name().tokens().size()) == 1;
            List<String> context = oneWord ? lookup.shared(a, b).evidence() : List.of();
            if (oneWord && context.isEmpty()) {
                return review(
                        "untyped_name",
                        0.5,
                        evidence,
                        List.of("a one-word name whose type is unknown on one side, and nothing shared says they are"
                                + " one"));
            }
            List<String> supported = new ArrayList<>(evidence);
            supported.addAll(context);
            Surface untyped = a.type() == EntityType.OTHER ? a : b;
            return unambiguous(untyped, ShortForm.VARIANT, "variant", 0.9, supported, lookup);
        }
        if (!compatible) {
            return Optional.empty();
        }
        Optional<Decision> shortDecision = shortFormDecision(a, b, lookup);
        if (shortDecision.isPresent()) {
            return shortDecision;
        }
        shortDecision = shortFormDecision(b, a, lookup);
        if (shortDecision.isPresent()) {
            return shortDecision;
        }
        return similarNames(a, b, looseA, looseB, lookup);
    }

    /**
     * One name, and a description on at least one side that tells which referent it names. Two descriptions that
     * {@link DescriptionSense#conflict conflict} are namesakes, unless both are in one document; a mention without
     * one joins a described referent when they share context, or when the name has only that one described referent,
     * and goes to review when it has several and nothing says which.
     */
    private static Optional<Decision> sameName(Surface a, Surface b, List<String> nameEvidence, Lookup lookup) {
        List<String> evidence = new ArrayList<>(nameEvidence);
        SharedContext shared = lookup.shared(a, b);
        List<String> context = shared.evidence();
        boolean sameDocument = shared.document() != null;
        DescriptionSense senseA = a.sense();
        DescriptionSense senseB = b.sense();
        if (!senseA.isNone() && !senseB.isNone()) {
            String conflict = senseA.conflict(senseB, () -> cosine(a.vector(), b.vector()) >= EMBEDDING_SUPPORT);
            String descriptions = quoted(a.description()) + " / " + quoted(b.description());
            if (conflict == null) {
                evidence.add("descriptions agree: " + descriptions);
                return Optional.of(new Decision(PairDecision.Kind.MERGE, "same_name", 0.95, evidence));
            }
            evidence.add("descriptions name different referents (" + conflict + "): " + descriptions);
            if (sameDocument) {
                evidence.addAll(context);
                return Optional.of(new Decision(PairDecision.Kind.MERGE, "same_name", 0.85, evidence));
            }
            return Optional.of(new Decision(PairDecision.Kind.SPLIT, "namesake", 0.9, evidence));
        }
        boolean aBare = senseA.isNone();
        Surface bare = aBare ? a : b;
        Surface described = aBare ? b : a;
        evidence.add("described as " + quoted(described.description()) + " where " + quoted(bare.written())
                + " is not described");
        if (!context.isEmpty()) {
            evidence.addAll(context);
            return Optional.of(new Decision(PairDecision.Kind.MERGE, "same_name", 0.9, evidence));
        }
        int referents = lookup.referents(bare);
        return review(
                "ambiguous_name",
                0.5,
                evidence,
                List.of(
                        referents > 1
                                ? "the name has " + referents + " described referents and nothing here says which"
                                : "nothing here says the mention is the described referent and not a namesake"));
    }

    private static Optional<Decision> shortFormDecision(Surface shortSide, Surface longSide, Lookup lookup) {
        ShortForm form = shortForm(shortSide, longSide);
        if (form == null || form == ShortForm.VARIANT) {
            return Optional.empty();
        }
        String pair = quoted(shortSide.written()) + " / " + quoted(longSide.written());
        return switch (form) {
            case ACRONYM ->
                unambiguous(shortSide, form, "acronym", 0.9, List.of("acronym of the initials: " + pair), lookup);
            case ALIAS -> unambiguous(shortSide, form, "alias", 0.9, List.of("declared alias: " + pair), lookup);
            case PARTIAL -> partial(shortSide, longSide, pair, lookup);
            case VARIANT -> Optional.empty();
        };
    }

    /** "Obama" for "Barack Obama": never for places or numbers, only when unambiguous, and only with shared context. */
    private static Optional<Decision> partial(Surface shortSide, Surface longSide, String pair, Lookup lookup) {
        EntityType type = shortSide.type() == EntityType.OTHER ? longSide.type() : shortSide.type();
        if (type == EntityType.PLACE || type == EntityType.DATE || type == EntityType.NUMBER) {
            return Optional.empty();
        }
        int ambiguity = lookup.ambiguity(shortSide, ShortForm.PARTIAL);
        List<String> evidence = new ArrayList<>(List.of("part of the name: " + pair));
        if (ambiguity > 1) {
            return ambiguity <= MAX_REVIEWED_AMBIGUITY
                    ? review("ambiguous", 0.5, evidence, List.of("could stand for " + ambiguity + " entities"))
                    : Optional.empty();
        }
        List<String> context =
                new ArrayList<>(lookup.shared(shortSide, longSide).evidence());
        double cosine = context.isEmpty() && shortSide.name().tokens().size() >= 2
                ? cosine(shortSide.vector(), longSide.vector())
                : 0;
        if (cosine >= EMBEDDING_SUPPORT) {
            // A full name without its middle parts: agreeing descriptions support it; a bare surname needs context.
            context.add(String.format(Locale.ROOT, "descriptions agree (cosine %.3f)", cosine));
        }
        if (context.isEmpty()) {
            evidence.add("no shared document or co-mentioned entity yet");
            return Optional.of(new Decision(PairDecision.Kind.DEFER, "partial_name", 0.6, evidence));
        }
        evidence.addAll(context);
        return Optional.of(new Decision(PairDecision.Kind.MERGE, "partial_name", 0.8, evidence));
    }

    /** Spelling variants ("Tchaikovsky" / "Tschaikovsky"): same token count and numbers, close strings. */
    private static Optional<Decision> similarNames(Surface a, Surface b, String looseA, String looseB, Lookup lookup) {
        if (a.name().tokens().size() != b.name().tokens().size()
                || Math.min(looseA.length(), looseB.length()) < 6
                || !a.name().numbers().equals(b.name().numbers())) {
            return embeddingNeighbours(a, b);
        }
        double similarity = JARO_WINKLER.apply(looseA, looseB);
        if (similarity < FUZZY) {
            return embeddingNeighbours(a, b);
        }
        List<String> evidence = new ArrayList<>(List.of(String.format(
                Locale.ROOT,
                "similar names (Jaro-Winkler %.3f): %s / %s",
                similarity,
                quoted(a.written()),
                quoted(b.written()))));
        List<String> context = lookup.shared(a, b).evidence();
        double cosine = cosine(a.vector(), b.vector());
        boolean person = a.type() == EntityType.PERSON || b.type() == EntityType.PERSON;
        if (!context.isEmpty() || (!person && cosine >= EMBEDDING_SUPPORT)) {
            evidence.addAll(context);
            if (cosine >= EMBEDDING_SUPPORT) {
                evidence.add(String.format(Locale.ROOT, "descriptions agree (cosine %.3f)", cosine));
            }
            return Optional.of(new Decision(PairDecision.Kind.MERGE, "fuzzy", similarity, evidence));
        }
        return review(
                "similar_name",
                similarity,
                evidence,
                List.of("alike names without supporting evidence are kept apart"));
    }

    /** Differently-named surfaces whose descriptions embed alike are shown for review, never merged on that alone. */
    private static Optional<Decision> embeddingNeighbours(Surface a, Surface b) {
        if (Collections.disjoint(a.lsh(), b.lsh())) {
            return Optional.empty(); // no shared hash bucket: not embedding neighbours, and no vector read
        }
        double cosine = cosine(a.vector(), b.vector());
        if (cosine < EMBEDDING_REVIEW) {
            return Optional.empty();
        }
        return review(
                "embedding",
                cosine,
                List.of(String.format(
                        Locale.ROOT,
                        "descriptions embed alike (cosine %.3f): %s / %s",
                        cosine,
                        quoted(a.written()),
                        quoted(b.written()))),
                List.of());
    }

    private static Optional<Decision> unambiguous(
            Surface shortSide, ShortForm form, String rule, double score, List<String> evidence, Lookup lookup) {
        int ambiguity = lookup.ambiguity(shortSide, form);
        if (ambiguity <= 1) {
            return Optional.of(new Decision(PairDecision.Kind.MERGE, rule, score, evidence));
        }
        if (ambiguity > MAX_REVIEWED_AMBIGUITY) {
            return Optional.empty();
        }
        return review(
                "ambiguous",
                0.5,
                evidence,
                List.of(quoted(shortSide.written()) + " could stand for " + ambiguity + " entities"));
    }

    private static Optional<Decision> review(String rule, double score, List<String> evidence, List<String> more) {
        List<String> all = new ArrayList<>(evidence);
        all.addAll(more);
        return Optional.of(new Decision(PairDecision.Kind.REVIEW, rule, Math.max(0, Math.min(1, score)), all));
    }

    private static List<String> typeEvidence(Surface a, Surface b) {
        return List.of("types differ: " + a.type().wireName() + " / " + b.type().wireName());
    }

    private static String quoted(String s) {
        return "\"" + s + "\"";
    }

    static double cosine(float[] a, float[] b) {
        if (a == null || b == null || a.length != b.length || a.length == 0) {
            return 0;
        }
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        return na == 0 || nb == 0 ? 0 : dot / Math.sqrt(na * nb);
    }
}
