package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CogitoRAG §4.3: for each (sub-)query, the top-K facts by cosine activate the entities they mention — evidence
 * fact(v) times the frequency reward 1 + α(1 − e^(−β c_v)), divided by the number of passages the entity is linked
 * to — and a random walk with restart spreads that activation over the passage–entity graph. CogniRank then fuses
 * the min–max normalized diffusion score with the normalized cosine, ε·diff + (1 − ε)·cos. Comparison questions
 * ("…, A or B?") are split into one sub-query per alternative and merged 2 + 2 + 1 (for K = 5). As our
 * extension, entities the query itself names are activated too ({@code query_entity_weight}, 0 turns it off).
 */
final class CogitoMode implements Retrieval.Mode {

    @Override
    public boolean usesQueryEntities() {
        return true;
    }

    @Override
    public String name() {
        return "cogito";
    }

    @Override
    public Map<String, double[]> bounds() {
        return Map.of(
                "top_facts", new double[] {0, 1000},
                "alpha", new double[] {0, 100},
                "beta", new double[] {0, 100},
                "epsilon", new double[] {0, 1},
                "restart", new double[] {0.01, 1},
                "push_epsilon", new double[] {1e-12, 1},
                "dense_candidates", new double[] {0, 10_000},
                "decompose", new double[] {0, 1},
                "query_entity_weight", new double[] {0, 100});
    }

    @Override
    public Map<String, Double> defaults() {
        return Map.of(
                "top_facts",
                5.0,
                "alpha",
                2.0,
                "beta",
                1.0,
                "epsilon",
                0.95,
                "restart",
                0.5,
                "push_epsilon",
                1e-6,
                "dense_candidates",
                50.0,
                "decompose",
                1.0,
                "query_entity_weight",
                1.0);
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        List<String> subQueries = p.get("decompose") > 0 ? q.subQueries() : List.of();
        Map<String, Object> explain = new LinkedHashMap<>();
        if (subQueries.size() < 2) {
            Single single = single(g, q, q.text(), q.vector(), p, topK);
            explain.putAll(single.explain());
            return new Retrieval.Result(Retrieval.ranked(single.scores(), topK), explain);
        }
        explain.put("sub_queries", subQueries);
        List<Single> parts = new ArrayList<>();
        List<float[]> vectors = q.embedAll(subQueries);
        for (int i = 0; i < subQueries.size(); i++) {
            parts.add(single(g, q, subQueries.get(i), vectors.get(i), p, topK));
        }
        List<Retrieval.Scored> out = new ArrayList<>();
        Set<Integer> taken = new HashSet<>();
        int each = Math.max(1, (topK - 1) / parts.size());
        for (Single part : parts) {
            int added = 0;
            for (Retrieval.Scored ranked : Retrieval.ranked(part.scores(), topK + each)) {
                int passage = ranked.passage();
                if (added == each || out.size() == topK) {
                    break;
                }
                if (taken.add(passage)) {
                    out.add(new Retrieval.Scored(passage, part.scores()[passage]));
                    added++;
                }
            }
        }
        // the global complement: the best remaining passages over all sub-queries
        double[] best = new double[g.passageCount()];
        Arrays.fill(best, Double.NEGATIVE_INFINITY);
        for (Single part : parts) {
            for (int i = 0; i < best.length; i++) {
                best[i] = Math.max(best[i], part.scores()[i]);
            }
        }
        for (Retrieval.Scored ranked : Retrieval.ranked(best, 2 * topK)) {
            int passage = ranked.passage();
            if (out.size() >= topK) {
                break;
            }
            if (taken.add(passage)) {
                out.add(new Retrieval.Scored(passage, best[passage]));
            }
        }
        List<Map<String, Object>> details = new ArrayList<>();
        parts.forEach(part -> details.add(part.explain()));
        explain.put("per_sub_query", details);
        return new Retrieval.Result(out, explain);
    }

    private record Single(double[] scores, Map<String, Object> explain) {}

    /**
     * Forward push for personalized PageRank (Andersen, Chung and Lang): the fixed point of
     * π = γ·π0 + (1 − γ)·W·π, with W spreading a node's mass equally over its neighbours. A node is pushed while its
     * residual exceeds {@code epsilon} times its degree, so the total work is O(1 / (ε·γ)) whatever the graph's size.
     */
    static double[] push(MemoryGraph g, double[] pi0, double restart, double epsilon, Map<String, Object> explain) {
        return push(g, pi0, restart, epsilon, MAX_PUSH_WORK, explain);
    }

    /**
     * How many neighbours a query's push may visit at most: far beyond what the default tolerance needs on any graph,
     * but a bound on what a request's own {@code restart} and {@code push_epsilon} may ask (their bound on the work,
     * 1 / (ε·γ), reaches 10^14 at the parameters' limits).
     */
    static final long MAX_PUSH_WORK = 20_000_000;

    static double[] push(
            MemoryGraph g, double[] pi0, double restart, double epsilon, long maxWork, Map<String, Object> explain) {
        int nodes = pi0.length;
        double[] estimate = new double[nodes];
        push(
                g,
                pi0.clone(),
                estimate,
                new int[nodes],
                new boolean[nodes],
                new boolean[nodes],
                restart,
                epsilon,
                maxWork,
                explain);
        return estimate;
    }

    /**
     * The push over arrays the caller gives (a query reuses them: at 100k passages each is a few megabytes): {@code
     * residual} starts as π0 and is consumed, {@code estimate} (zeros) gets π; {@code queued} (all false) is all false
     * again at the end, and {@code seen} marks the nodes pushed; {@code queue} may hold anything.
     */
    private static void push(
            MemoryGraph g,
            double[] residual,
            double[] estimate,
            int[] queue,
            boolean[] queued,
            boolean[] seen,
            double restart,
            double epsilon,
            long maxWork,
            Map<String, Object> explain) {
        int entities = g.entityCount();
        int nodes = entities + g.passageCount();
        // first in, first out, on a ring of ints: a node is queued at most once at a time, so it never overflows
        int head = 0;
        int size = 0;
        for (int u = 0; u < nodes; u++) {
            if (residual[u] > 0) {
                queue[size++] = u;
                queued[u] = true;
            }
        }
        long pushes = 0;
        long work = 0;
        int touched = 0;
        while (size > 0) {
            if (work > maxWork) {
                // out of budget: what is queued stays in the residual (the estimate is a lower bound of π)
                for (; size > 0; size--) {
                    queued[queue[head]] = false;
                    head = head + 1 == nodes ? 0 : head + 1;
                }
                explain.put("diffusion_stopped", "work budget of " + maxWork + " neighbour visits");
                break;
            }
            int u = queue[head];
            head = head + 1 == nodes ? 0 : head + 1;
            size--;
            queued[u] = false;
            int[] neighbours = u < entities ? g.entityPassages[u] : g.passageEntities[u - entities];
            double r = residual[u];
            if (r <= epsilon * Math.max(1, neighbours.length)) {
                continue;
            }
            pushes++;
            if (!seen[u]) {
                seen[u] = true;
                touched++;
            }
            estimate[u] += restart * r;
            residual[u] = 0;
            if (neighbours.length == 0) {
                continue; // a dangling node keeps its share of the restart, as in the power iteration
            }
            work += neighbours.length;
            double share = (1 - restart) * r / neighbours.length;
            for (int n : neighbours) {
                int v = u < entities ? entities + n : n;
                residual[v] += share;
                if (queued[v]) {
                    continue;
                }
                int degree = v < entities ? g.entityPassages[v].length : g.passageEntities[v - entities].length;
                if (residual[v] > epsilon * Math.max(1, degree)) {
                    int tail = head + size++;
                    queue[tail >= nodes ? tail - nodes : tail] = v;
                    queued[v] = true;
                }
            }
        }
        explain.put("diffusion_pushes", pushes);
        explain.put("diffusion_nodes_touched", touched);
    }

    private Single single(MemoryGraph g, Retrieval.Query q, String text, float[] qv, Retrieval.Params p, int topK) {
        Map<String, Object> explain = new LinkedHashMap<>();
        explain.put("query", text);
        // the dense candidates of CogniRank, by the passage index (exact or approximate)
        List<Retrieval.Scored> nearest = q.nearestPassages(g, qv, Math.max(topK, p.integer("dense_candidates")));
        // (11)-(12) top-K facts by cosine
        double[] evidence = new double[g.entityCount()];
        int[] hits = new int[g.entityCount()];
        List<Map<String, Object>> seedFacts = new ArrayList<>();
        for (Retrieval.Scored top : g.factSearch.nearest(qv, p.integer("top_facts"))) {
            MemoryGraph.Fact fact = g.facts.get(top.passage());
            seedFacts.add(Map.of("fact", g.factText(top.passage()), "score", top.score()));
            // (13)-(15) entity activation
            for (int v : new int[] {fact.head(), fact.tail()}) {
                if (v >= 0) {
                    evidence[v] += top.score();
                    hits[v]++;
                }
            }
        }
        explain.put("seed_facts", seedFacts);
        double alpha = p.get("alpha");
        double beta = p.get("beta");
        int nodes = g.entityCount() + g.passageCount();
        // arrays over every node, reused by the snapshot's queries: each is cleared before it is given back
        double[] pi0 = g.nodeScratch.sums();
        double total = 0;
        List<double[]> activated = new ArrayList<>();
        for (int v = 0; v < g.entityCount(); v++) {
            if (hits[v] == 0) {
                continue;
            }
            double fact = evidence[v] / hits[v];
            double reward = 1 + alpha * (1 - Math.exp(-beta * hits[v]));
            pi0[v] = Math.max(0, fact * reward / Math.max(1, g.entityPassages[v].length));
            total += pi0[v];
            activated.add(new double[] {v, pi0[v]});
        }
        // Our extension: entities the query names activate directly, with the same coverage penalty.
        double queryWeight = p.get("query_entity_weight");
        for (int v : q.entities()) {
            if (queryWeight > 0 && v >= 0 && v < g.entityCount()) {
                double a = queryWeight / Math.max(1, g.entityPassages[v].length);
                pi0[v] += a;
                total += a;
                activated.add(new double[] {v, pi0[v]});
            }
        }
        activated.sort(Comparator.comparingDouble((double[] a) -> -a[1]));
        List<Map<String, Object>> seeds = new ArrayList<>();
        for (double[] a : activated.subList(0, Math.min(10, activated.size()))) {
            seeds.add(Map.of("entity", g.entityNames.get((int) a[0]), "activation", a[1]));
        }
        explain.put("seed_entities", seeds);
        if (total <= 0) {
            explain.put("fallback", "no fact activated an entity; cosine ranking");
            double[] cos = new double[g.passageCount()];
            Arrays.fill(cos, Double.NEGATIVE_INFINITY);
            nearest.forEach(n -> cos[n.passage()] = n.score());
            Arrays.fill(pi0, 0);
            g.nodeScratch.giveBack(pi0);
            return new Single(cos, explain);
        }
        for (int i = 0; i < nodes; i++) {
            pi0[i] /= total;
        }
        // (16) random walk with restart over the bipartite passage–entity graph, solved by local push: work is
        // bounded by the neighbourhood the activation reaches, not by the size of the graph
        double[] pi = g.nodeScratch.sums();
        int[] queue = g.nodeScratch.ints();
        boolean[] queued = g.nodeScratch.flags();
        boolean[] seen = g.nodeScratch.flags();
        push(g, pi0, pi, queue, queued, seen, p.get("restart"), p.get("push_epsilon"), MAX_PUSH_WORK, explain);
        // (17)-(18) CogniRank over the candidates: passages the diffusion reached, plus the best by cosine
        double[] diff = new double[g.passageCount()];
        double[] cos = new double[g.passageCount()];
        boolean[] candidate = new boolean[g.passageCount()];
        for (Retrieval.Scored n : nearest.subList(0, Math.min(nearest.size(), p.integer("dense_candidates")))) {
            candidate[n.passage()] = true;
            cos[n.passage()] = n.score();
        }
        for (int passage = 0; passage < diff.length; passage++) {
            diff[passage] = pi[g.entityCount() + passage];
            if (diff[passage] > 0 && !candidate[passage]) {
                candidate[passage] = true;
                cos[passage] = Retrieval.cosine(g, passage, qv);
            }
        }
        // pi0 held the residuals; queued is all false again once the push is done
        Arrays.fill(pi0, 0);
        Arrays.fill(pi, 0);
        Arrays.fill(seen, false);
        g.nodeScratch.giveBack(pi0);
        g.nodeScratch.giveBack(pi);
        g.nodeScratch.giveBack(queue);
        g.nodeScratch.giveBack(queued);
        g.nodeScratch.giveBack(seen);
        double eps = p.get("epsilon");
        double[] nd = Retrieval.minMax(diff, candidate, 1e-12);
        double[] nc = Retrieval.minMax(cos, candidate, 1e-12);
        double[] score = new double[diff.length];
        int candidates = 0;
        for (int i = 0; i < score.length; i++) {
            score[i] = candidate[i] ? eps * nd[i] + (1 - eps) * nc[i] : Double.NEGATIVE_INFINITY;
            candidates += candidate[i] ? 1 : 0;
        }
        explain.put("candidates", candidates);
        return new Single(score, explain);
    }
}
