package dev.engram.stores;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What entity resolution decided about two surface entities that the blocking indexes made candidates: {@code merge},
 * {@code review} (a person should look), {@code defer} (plausible, waiting for supporting evidence) or {@code split}
 * (an operator keeps them apart; rule {@code operator}, as for an operator's merge), with the rule
 * that decided, its score and the evidence, so every merge can be audited. Pairs with no decision are not stored.
 * {@code features} are the numbers the merge score and its constraints read, those that are not zero (empty where a rule or an operator
 * decided alone, and in decisions stored before there was a score).
 */
public record PairDecision(
        String namespace,
        String entityId,
        String otherId,
        Kind decision,
        String rule,
        double score,
        List<String> evidence,
        Instant at,
        Map<String, Double> features) {

    /** What was decided about the pair (stored by its lowercase name). */
    public enum Kind {
        /** The two are one entity. */
        @JsonProperty("merge")
        MERGE,
        /** A person should look. */
        @JsonProperty("review")
        REVIEW,
        /** Plausible; waiting for supporting evidence. */
        @JsonProperty("defer")
        DEFER,
        /** An operator keeps the two apart. */
        @JsonProperty("split")
        SPLIT;

        /** The name in stores, events and responses. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public PairDecision {
        evidence = evidence == null ? List.of() : List.copyOf(evidence);
        // only the features that are not zero are kept: a feature absent is zero, and most are zero for any one pair
        TreeMap<String, Double> kept = new TreeMap<>();
        if (features != null) {
            features.forEach((k, v) -> {
                if (v != null && v != 0) {
                    kept.put(k, v);
                }
            });
        }
        features = Collections.unmodifiableMap(kept);
    }

    /** A decision without features. */
    public PairDecision(
            String namespace,
            String entityId,
            String otherId,
            Kind decision,
            String rule,
            double score,
            List<String> evidence,
            Instant at) {
        this(namespace, entityId, otherId, decision, rule, score, evidence, at, Map.of());
    }

    /** The same decision seen from the other surface. */
    public PairDecision mirrored() {
        return new PairDecision(namespace, otherId, entityId, decision, rule, score, evidence, at, features);
    }

    /** Equal in everything but the time it was made. */
    public boolean sameAs(PairDecision o) {
        return o != null
                && decision == o.decision
                && rule.equals(o.rule)
                && Double.compare(score, o.score) == 0
                && evidence.equals(o.evidence)
                && features.equals(o.features);
    }
}
