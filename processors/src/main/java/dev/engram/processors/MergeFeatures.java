package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.stores.DescriptionSense;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.commons.text.similarity.JaroWinklerSimilarity;

/**
 * The features of a candidate pair that the merge score reads: how the names relate, what the types and descriptions
 * say, and what the two share of their context. Each is a number between 0 and 1 (cosines may be below 0); they are
 * the evidence the rules already weigh, made numbers so that their weights can be fit to labelled pairs.
 */
final class MergeFeatures {

    /** The names of the features, in a fixed order; a model has a weight for each. */
    static final List<String> NAMES = List.of(
            "same_name",
            "acronym",
            "alias",
            "partial",
            "similar",
            "jaro_winkler",
            "one_word",
            "unambiguous",
            "same_type",
            "untyped",
            "person",
            "descriptions_agree",
            "descriptions_conflict",
            "one_described",
            "both_bare",
            "description_cosine",
            "same_document",
            "co_mentioned",
            "places",
            "passage_cosine");

    /**
     * Whether one document holds both mentions: beside the features, not weighed by the score, read where a session
     * is not enough.
     */
    static final String ONE_DOCUMENT = "one_document";

    private static final JaroWinklerSimilarity JARO_WINKLER = new JaroWinklerSimilarity();

    private MergeFeatures() {}

    static Map<String, Double> of(PairRules.Surface a, PairRules.Surface b, PairRules.Lookup lookup) {
        Map<String, Double> f = new TreeMap<>();
        NAMES.forEach(n -> f.put(n, 0.0));
        String looseA = a.name().loose();
        String looseB = b.name().loose();
        boolean unambiguous;
        if (looseA.equals(looseB)) {
            f.put("same_name", 1.0);
            boolean aBare = a.sense().isNone();
            boolean bBare = b.sense().isNone();
            if (aBare != bBare) {
                unambiguous = lookup.referents(aBare ? a : b) <= 1;
            } else if (a.type() != b.type()) {
                PairRules.Surface untyped = a.type() == EntityType.OTHER ? a : b;
                unambiguous = lookup.ambiguity(untyped, PairRules.ShortForm.VARIANT) <= 1;
            } else {
                unambiguous = true;
            }
        } else {
            PairRules.Surface shortSide = a;
            PairRules.ShortForm form = PairRules.shortForm(a, b);
            if (form == null) {
                shortSide = b;
                form = PairRules.shortForm(b, a);
            }
            if (form == null || form == PairRules.ShortForm.VARIANT) {
                f.put("similar", 1.0);
                unambiguous = true;
            } else {
                f.put(form.name().toLowerCase(Locale.ROOT), 1.0);
                unambiguous = lookup.ambiguity(shortSide, form) <= 1;
            }
        }
        f.put("jaro_winkler", JARO_WINKLER.apply(looseA, looseB));
        f.put(
                "one_word",
                flag(Math.min(a.name().tokens().size(), b.name().tokens().size()) <= 1));
        f.put("unambiguous", flag(unambiguous));
        boolean typed = a.type() != EntityType.OTHER && b.type() != EntityType.OTHER;
        f.put("same_type", flag(typed && a.type() == b.type()));
        f.put("untyped", flag(!typed));
        f.put("person", flag(a.type() == EntityType.PERSON || b.type() == EntityType.PERSON));
        DescriptionSense senseA = a.sense();
        DescriptionSense senseB = b.sense();
        if (!senseA.isNone() && !senseB.isNone()) {
            boolean conflict = senseA.conflict(
                            senseB, () -> PairRules.cosine(a.vector(), b.vector()) >= PairRules.EMBEDDING_SUPPORT)
                    != null;
            f.put(conflict ? "descriptions_conflict" : "descriptions_agree", 1.0);
        } else if (senseA.isNone() != senseB.isNone()) {
            f.put("one_described", 1.0);
        } else {
            f.put("both_bare", 1.0);
        }
        f.put("description_cosine", PairRules.cosine(a.vector(), b.vector()));
        SharedContext shared = lookup.shared(a, b);
        // a conversation's session is to its turns what a document is to its passages (each turn is a document of
        // its own): one feature, so that a score fit on other kinds of text weighs a shared session as it weighs a
        // shared document, and one fit with conversations learns nothing of sessions that documents would not carry
        f.put("same_document", flag(shared.document() != null || shared.session() != null));
        // not a feature of the score: whether one document (not only one session) holds both, for PairRules.withheld
        f.put(ONE_DOCUMENT, flag(shared.document() != null));
        f.put("co_mentioned", Math.min(3, shared.specific()) / 3.0);
        f.put("places", Math.min(3, shared.neighbours().size() - shared.specific()) / 3.0);
        f.put("passage_cosine", shared.passageCosine());
        return f;
    }

    private static double flag(boolean b) {
        return b ? 1 : 0;
    }
}
