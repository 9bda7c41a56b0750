package dev.engram.processors;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What two surface entities share of their context: a document, a session of a conversation, entities mentioned with
 * both, and how alike the passages that mention them are. Entity resolution reads it two ways: as evidence (the
 * sentences a decision shows), and as features of the merge score.
 *
 * @param document a document both are mentioned in, or null
 * @param session a conversation session both are mentioned in, or null
 * @param neighbours the names of entities mentioned with both (years and numbers left out), places among them
 * @param specific how many of {@code neighbours} are not places: a place is mentioned with everything
 * @param passageCosine the highest cosine between a passage of one and a passage of the other; 0 without passages
 */
public record SharedContext(
        String document, String session, List<String> neighbours, int specific, double passageCosine) {

    /** Nothing shared. */
    public static final SharedContext NONE = new SharedContext(null, null, List.of(), 0, 0);

    /**
     * The cosine above which two passages are about one subject: passages about different subjects of one field (two
     * footballers, two films) stay below it.
     */
    static final double ALIKE_PASSAGES = 0.8;

    /** How shared context that is a shared document starts. */
    static final String SAME_DOCUMENT = "both in document ";

    public SharedContext {
        neighbours = List.copyOf(neighbours);
    }

    /** Both mentioned in one document. */
    public static SharedContext inDocument(String document) {
        return new SharedContext(document, null, List.of(), 0, 0);
    }

    /** Both mentioned with these entities, none of them a place. */
    public static SharedContext mentionedWith(String... names) {
        return new SharedContext(null, null, List.of(names), names.length, 0);
    }

    /** Their passages alike, with nothing else shared. */
    public static SharedContext alikePassages(double cosine) {
        return new SharedContext(null, null, List.of(), 0, cosine);
    }

    /**
     * The supporting evidence this context gives, strongest first: one document, else one session, else entities
     * mentioned with both (one that is no place, or two places), else passages about one subject; empty when none
     * of these holds.
     */
    public List<String> evidence() {
        if (document != null) {
            return List.of(SAME_DOCUMENT + document);
        }
        if (session != null) {
            return List.of("both in session " + session);
        }
        if (specific > 0 || neighbours.size() >= 2) {
            List<String> out = new ArrayList<>();
            for (String n : neighbours.subList(0, Math.min(3, neighbours.size()))) {
                out.add("both mentioned with \"" + n + "\"");
            }
            return out;
        }
        return passageCosine >= ALIKE_PASSAGES
                ? List.of(String.format(Locale.ROOT, "their passages alike (cosine %.2f)", passageCosine))
                : List.of();
    }
}
