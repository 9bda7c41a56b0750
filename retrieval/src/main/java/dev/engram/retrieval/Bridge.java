package dev.engram.retrieval;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.NormalizedNames;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Multi-hop retrieval without an LLM: a compositional question ("Who founded the label that signed X?") names the
 * first hop (X) but not the second (the label). The passages that answer the first hop name it, so the entities of the
 * best passages that the question does not name are the candidate bridges; probing again with the question anchored on
 * each bridge reaches the second hop.
 */
final class Bridge {

    private static final Set<EntityType> NAMED =
            EnumSet.complementOf(EnumSet.of(EntityType.DATE, EntityType.NUMBER, EntityType.CONCEPT));

    private Bridge() {}

    /**
     * Up to {@code n} bridge entities: named by the {@code from} best passages of {@code scores}, not named by the
     * question nor in {@code probed}, a named thing (not a date, a number or a common-noun concept: those are values,
     * reached by the facts, not places to go), linked to at least two passages (a bridge must lead somewhere else) and to at
     * most {@code maxDegree} (a hub leads everywhere); weighted by the scores of the passages that name them over the
     * log of their degree, strongest first (ties by entity index).
     */
    static List<Integer> cues(
            MemoryGraph g, double[] scores, int from, Set<Integer> probed, String question, int n, int maxDegree) {
        String q = question.toLowerCase(Locale.ROOT);
        Map<Integer, Double> weight = new HashMap<>();
        for (int passage : Retrieval.top(scores, from)) {
            if (!(scores[passage] > 0)) {
                continue;
            }
            for (int e : g.passageEntities[passage]) {
                int degree = g.entityPassages[e].length;
                if (probed.contains(e)
                        || !NAMED.contains(g.entityTypes.get(e))
                        || degree < 2
                        || degree > maxDegree
                        || q.contains(g.entityNames.get(e).toLowerCase(Locale.ROOT))) {
                    continue;
                }
                weight.merge(e, scores[passage] / Math.log(1 + degree), Double::sum);
            }
        }
        List<Integer> out = new ArrayList<>(weight.keySet());
        out.sort(Comparator.comparingDouble((Integer e) -> -weight.get(e)).thenComparingInt(e -> e));
        return List.copyOf(out.subList(0, Math.min(n, out.size())));
    }

    /**
     * The second hop: for each cue, the {@code depth} passages nearest to the question anchored on it ({@code question
     * + " " + name}); a passage reached by several probes keeps its best cosine. Every passage not reached scores −∞.
     * The probe searches all passages, not only the cue's: the answer passage of the second hop often names the bridge
     * in words the extractor did not link (a pronoun, a shortened name), and measured on the dev sets the search
     * restricted to the cue's linked passages lost top-2 precision on HotpotQA (see docs/retrieval.md).
     */
    static double[] secondHop(MemoryGraph g, Retrieval.Query q, List<Integer> cues, int depth, boolean composed) {
        double[] out = new double[g.passageCount()];
        Arrays.fill(out, Double.NEGATIVE_INFINITY);
        if (cues.isEmpty()) {
            return out;
        }
        List<float[]> probes = composed
                ? cues.stream()
                        .map(cue -> composed(q.vector(), g.entityVectors.get(cue)))
                        .toList()
                : q.embedAll(cues.stream()
                        .map(cue -> q.text() + " " + g.entityNames.get(cue))
                        .toList());
        for (List<Retrieval.Scored> found : g.passageSearch.nearestEach(probes, depth)) {
            for (Retrieval.Scored s : found) {
                out[s.passage()] = Math.max(out[s.passage()], s.score());
            }
        }
        return out;
    }

    /**
     * The own pages of the first of {@code cues} (the strongest) that has any: the passages linked to it whose
     * document's title is its name, both in their normalized form ({@link NormalizedNames}, as entity resolution keys
     * names) and without a closing parenthetical aside ("Rottweil" has the page titled "Rottweil" or "Rottweil (town)",
     * "Rank Organisation" the page "The Rank Organisation"). An encyclopedia's article, a manual's page on a component,
     * in as many passages as the document has; a conversation's turns have none. Reads the titles of the cues' linked
     * passages, which are at most the bridge step's maximum degree each.
     */
    static List<Integer> pages(MemoryGraph g, List<Integer> cues) {
        for (int cue : cues) {
            String name = NormalizedNames.of(withoutAside(g.entityNames.get(cue)));
            if (name.isEmpty()) {
                continue; // no title names it (an untitled passage reads as "")
            }
            List<Integer> out = new ArrayList<>();
            for (int passage : g.entityPassages[cue]) {
                if (!out.contains(passage)
                        && name.equals(NormalizedNames.of(
                                withoutAside(g.passage(passage).title())))) {
                    out.add(passage);
                }
            }
            if (!out.isEmpty()) {
                return out;
            }
        }
        return List.of();
    }

    /** A title without the parenthetical aside that closes it: "Rottweil (town)" is "Rottweil". */
    static String withoutAside(String title) {
        if (title == null) {
            return "";
        }
        String t = title.strip();
        int open = t.endsWith(")") ? t.lastIndexOf(" (") : -1;
        return open > 0 ? t.substring(0, open).strip() : t;
    }

    /** The second hop's ranking with {@code pages} first, in their order, and the rest as it was. */
    static List<Retrieval.Scored> leading(List<Integer> pages, List<Retrieval.Scored> ranking) {
        if (pages.isEmpty()) {
            return ranking;
        }
        List<Retrieval.Scored> out = new ArrayList<>(pages.size() + ranking.size());
        double top = ranking.isEmpty() ? 1 : ranking.get(0).score();
        for (int page : pages) {
            out.add(new Retrieval.Scored(page, top));
        }
        for (Retrieval.Scored s : ranking) {
            if (!pages.contains(s.passage())) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * {@code ranked} (at most {@code topK}, best first) with one of {@code pages} (the passages of one page) at rank
     * {@code atMost} at the latest: unchanged when one of them already ranks there; else the one the fusion scored
     * best ({@code scores}) is moved up from below, or let in from outside with the score of the passage it displaces
     * (so that scores still descend), the last one dropping out past {@code topK}. Unchanged too when {@code topK} is
     * shorter than {@code atMost}.
     */
    static List<Retrieval.Scored> placed(
            List<Retrieval.Scored> ranked, List<Integer> pages, double[] scores, int atMost, int topK) {
        if (pages.isEmpty() || atMost > topK) {
            return ranked;
        }
        for (int i = 0; i < Math.min(atMost, ranked.size()); i++) {
            if (pages.contains(ranked.get(i).passage())) {
                return ranked;
            }
        }
        int page = pages.get(0);
        for (int p : pages) {
            if (scores[p] > scores[page]) {
                page = p;
            }
        }
        List<Retrieval.Scored> out = new ArrayList<>(ranked);
        for (int i = out.size() - 1; i >= 0; i--) {
            if (out.get(i).passage() == page) {
                out.remove(i);
            }
        }
        int to = Math.min(atMost - 1, out.size());
        double s = to < out.size() ? Math.max(scores[page], out.get(to).score()) : scores[page];
        out.add(to, new Retrieval.Scored(page, s));
        return out.size() > topK ? List.copyOf(out.subList(0, topK)) : out;
    }

    /** The query's vector plus the entity's, normalized: the question anchored on the entity without the model. */
    static float[] composed(float[] query, float[] entity) {
        if (entity == null || entity.length != query.length) {
            return query;
        }
        float[] v = new float[query.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = query[i] + entity[i];
        }
        MemoryGraph.normalize(v);
        return v;
    }
}
