package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;

/**
 * One ranking from two snapshots of a namespace: its whole snapshot (the base), and a small snapshot of only the
 * passages written since (the recent layer), which a query reads while the next whole snapshot is built. A mode runs on
 * each; this places the recent layer's passages among the base's.
 *
 * <p>A base passage the recent layer holds again (it was written since) is left out: the recent layer's copy is the one
 * memory holds now. Each recent passage is placed where its similarity to the query would put it among the base's
 * ranked passages: before every base passage less similar to the query, behind every one more similar. For
 * {@code dense}, whose ranking is by that similarity, this is the ranking a whole snapshot of both would give. For the
 * modes that rank by links, by words or by both, it is an approximation until the next whole snapshot: the recent
 * passages' own links and statistics are of the recent layer alone, so their scores are not comparable with the
 * base's, while their similarity to the query is.
 *
 * <p>A placed passage's score is its own, bounded by the scores of the base passages before and after it, so that the
 * scores still descend with the rank wherever the base's did.
 */
public final class RecentLayer {

    private RecentLayer() {}

    /** A passage of one of the two snapshots, with its score. */
    public record Hit(MemoryGraph graph, int passage, double score) {}

    /** The base's ranking alone, as hits. */
    public static List<Hit> of(MemoryGraph base, List<Retrieval.Scored> ranked) {
        List<Hit> out = new ArrayList<>(ranked.size());
        for (Retrieval.Scored s : ranked) {
            out.add(new Hit(base, s.passage(), s.score()));
        }
        return out;
    }

    /**
     * The base's and the recent layer's rankings as one, best first.
     *
     * @param query the query's vector, unit length, as the passages' are
     */
    public static List<Hit> merge(
            MemoryGraph base,
            List<Retrieval.Scored> baseRanked,
            MemoryGraph recent,
            List<Retrieval.Scored> recentRanked,
            float[] query) {
        List<Retrieval.Scored> kept = new ArrayList<>(baseRanked.size());
        for (Retrieval.Scored s : baseRanked) {
            if (recent.passageIndex(base.passage(s.passage()).id()) < 0) {
                kept.add(s); // not written since
            }
        }
        double[] keptSimilarity = new double[kept.size()];
        for (int i = 0; i < keptSimilarity.length; i++) {
            keptSimilarity[i] = base.passageSimilarity(kept.get(i).passage(), query);
        }
        // each recent passage goes before the base passage at its slot: the number of base passages more similar
        int[] slot = new int[recentRanked.size()];
        for (int r = 0; r < slot.length; r++) {
            double similarity = recent.passageSimilarity(recentRanked.get(r).passage(), query);
            int more = 0;
            for (double s : keptSimilarity) {
                if (s > similarity) {
                    more++;
                }
            }
            slot[r] = more;
        }
        List<Hit> out = new ArrayList<>(kept.size() + recentRanked.size());
        for (int at = 0; at <= kept.size(); at++) {
            Retrieval.Scored before = at == 0 ? null : kept.get(at - 1);
            Retrieval.Scored after = at == kept.size() ? null : kept.get(at);
            for (int r = 0; r < slot.length; r++) {
                if (slot[r] != at) {
                    continue;
                }
                double score = recentRanked.get(r).score();
                if (before != null) {
                    score = Math.min(score, before.score());
                }
                if (after != null) {
                    score = Math.max(score, after.score());
                }
                out.add(new Hit(recent, recentRanked.get(r).passage(), score));
            }
            if (after != null) {
                out.add(new Hit(base, after.passage(), after.score()));
            }
        }
        return out;
    }
}
