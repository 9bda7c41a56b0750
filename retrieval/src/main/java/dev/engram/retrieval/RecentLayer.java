package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One ranking from two snapshots of a namespace: its whole snapshot (the base), and a small snapshot of only the
 * passages written since (the recent layer), which a query reads while the next whole snapshot is built. A mode runs on
 * each; this places the recent layer's passages among the base's.
 *
 * <p>A base passage changed since (written again, deleted, or not yet in a snapshot) is left out: the recent layer's
 * copy, if any, is the one memory holds now. Each recent passage is placed after as many of the base's ranked passages
 * as are more similar to the query than it is. For {@code dense}, whose ranking is by that similarity, that is before
 * every less similar one and after every more similar one: the ranking a whole snapshot of both would give, as long as
 * the base is asked for as many more passages as it holds that changed since. For the modes that rank by links, by
 * words or by both, it is an approximation until the next whole snapshot: the recent passages' own links and
 * statistics are of the recent layer alone, so their scores are not comparable with the base's, while their
 * similarity to the query is.
 *
 * <p>A placed passage's score is its own, bounded by the scores of the base passages before and after it, so that the
 * scores still descend with the rank wherever the base's did.
 */
public final class RecentLayer {

    private RecentLayer() {}

    /** A passage of one of the two snapshots, with its score. */
    public record Hit(MemoryGraph graph, int passage, double score) {}

    /** Ranked passages of either snapshot, best first, and how the mode arrived at them. */
    public record Ranked(List<Hit> hits, Map<String, Object> explanation) {}

    /**
     * Runs {@code mode} on the base and on the recent layer (when there is one) and ranks their passages as one.
     *
     * @param changed the ids of the passages changed since the base (its copies of them are stale), of which it holds
     *     {@code shadowed}: the base is asked for that many more, so that {@code k} of its own remain
     * @param recentQuery the query as the mode runs it on the recent layer (without LLM agents: they ran on the base)
     */
    public static Ranked retrieve(
            Retrieval.Mode mode,
            Retrieval.Params params,
            int k,
            MemoryGraph base,
            Retrieval.Query baseQuery,
            MemoryGraph recent,
            Retrieval.Query recentQuery,
            Set<String> changed,
            int shadowed) {
        Retrieval.Result fromBase = mode.retrieve(base, baseQuery, params, k + shadowed);
        if (recent == null) {
            return new Ranked(of(base, fromBase.ranked()), fromBase.explanation());
        }
        List<Retrieval.Scored> fromRecent = recent.passageCount() == 0
                ? List.of()
                : mode.retrieve(recent, recentQuery, params, k).ranked();
        Map<String, Object> explanation = new LinkedHashMap<>(fromBase.explanation());
        Map<String, Object> layer = new LinkedHashMap<>();
        layer.put("graph_version", recent.version());
        layer.put("passages", recent.passageCount());
        layer.put("changed", changed.size());
        layer.put("ranked", fromRecent.size());
        explanation.put("recent", layer);
        return new Ranked(merge(base, fromBase.ranked(), recent, fromRecent, changed, baseQuery.vector()), explanation);
    }

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
     * @param changed the ids of the passages changed since the base, every passage of the recent layer among them:
     *     the base's copies of them are left out
     * @param query the query's vector, unit length, as the passages' are
     */
    public static List<Hit> merge(
            MemoryGraph base,
            List<Retrieval.Scored> baseRanked,
            MemoryGraph recent,
            List<Retrieval.Scored> recentRanked,
            Set<String> changed,
            float[] query) {
        List<Retrieval.Scored> kept = new ArrayList<>(baseRanked.size());
        for (Retrieval.Scored s : baseRanked) {
            if (!changed.contains(base.passage(s.passage()).id())) {
                kept.add(s); // not changed since
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
