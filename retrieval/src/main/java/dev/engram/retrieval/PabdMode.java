package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * IGMiRAG §3.4–3.5 and App. A over the memory as a hierarchical hypergraph: entities (layer N), facts (pairwise
 * relations, layer L) and multi-entity relations (layer H), each tied to the passages it came from.
 *
 * <ol>
 *   <li>Intuitive anchors: BM25 over the names of all units, and dual-focus vector recall — a global quota
 *       k_G = min(⌈(1 − m/6)·k_b + k_min⌉, k_max) over all embedded units and a local quota k_L = ⌊m/6·k_b⌋ within
 *       the target layer — fused by RRF (k0 = 60) into anchor scores s(v).
 *   <li>Chunk relevance: s(c) = Σ s(v) / deg(v) over the units of a passage.
 *   <li>Preference-aware bidirectional diffusion for up to d iterations: top-down, facts and relations raise their
 *       entities by (S[c] − S[v])·ρ·γ; bottom-up, entities raise the facts and relations whose share of stronger
 *       neighbours P passes the dynamic threshold τ − b (τ_L = 0.5, τ_H = 0.4) by (S[v] − S[c])·(ρ/2 + P²/2)·γ,
 *       with ρ = n / (n + 1) for n stronger neighbours; the bias b rises by 0.05 when an iteration activates nothing
 *       and falls when it does; diffusion stops at depth d or when it stalls.
 *   <li>Final chunk relevance: the same accumulation over the extended scores, fused with the initial one.
 * </ol>
 *
 * <p>Without an LLM to parse the query, the target layer is the entity layer, the matching score {@code m} and the
 * semantic depth {@code d} are parameters; the adaptive window (k_u·d units, k_c·d chunks) is reported in the
 * explanation, while the response returns the {@code top_k} passages asked for.
 */
final class PabdMode implements Retrieval.Mode {

    @Override
    public String name() {
        return "pabd";
    }

    @Override
    public Map<String, double[]> bounds() {
        Map<String, double[]> b = new LinkedHashMap<>();
        b.put("gamma", new double[] {0, 1});
        b.put("tau_l", new double[] {0, 1});
        b.put("tau_h", new double[] {0, 1});
        b.put("depth", new double[] {0, 20});
        b.put("match", new double[] {0, 6}); // the matching degree m: the local quota takes m/6 of k_b
        b.put("k_b", new double[] {0, 10_000});
        b.put("k_min", new double[] {0, 10_000});
        b.put("k_max", new double[] {1, 10_000});
        b.put("rrf_k", new double[] {0, 1000});
        b.put("k_u", new double[] {0, 1000});
        b.put("k_c", new double[] {0, 1000});
        b.put("initial_weight", new double[] {0, 1});
        return Map.copyOf(b);
    }

    @Override
    public Map<String, Double> defaults() {
        Map<String, Double> d = new LinkedHashMap<>();
        d.put("gamma", 0.2);
        d.put("tau_l", 0.5);
        d.put("tau_h", 0.4);
        d.put("depth", 2.0);
        d.put("match", 3.0);
        d.put("k_b", 20.0);
        d.put("k_min", 5.0);
        d.put("k_max", 30.0);
        d.put("rrf_k", 60.0);
        d.put("k_u", 5.0);
        d.put("k_c", 2.0);
        d.put("initial_weight", 0.5);
        return Map.copyOf(d);
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        int ne = g.entityCount();
        int nf = g.factCount();
        int nr = g.relations.size();
        int units = ne + nf + nr;
        Map<String, Object> explain = new LinkedHashMap<>();

        // 1. anchors: BM25 on unit names + dual-focus vector recall, fused by RRF
        // the units whose names share a word with the question, best first (all of them score above 0)
        List<Retrieval.Scored> byName = g.unitNames.top(q.text(), Math.min(units, (int) p.get("k_max")));
        double m = p.get("match");
        int kGlobal = (int) Math.min(Math.ceil((1 - m / 6) * p.get("k_b") + p.get("k_min")), p.get("k_max"));
        int kLocal = (int) Math.floor(m / 6 * p.get("k_b"));
        // global: entities and facts together by cosine; local: entities alone (the target layer)
        // one entity search serves both quotas where the smaller is exactly the head of the larger
        int kEntities = Math.max(kGlobal, kLocal);
        List<Retrieval.Scored> entities =
                kEntities <= g.entitySearch.headsAgreeUpTo() ? g.entitySearch.nearest(q.vector(), kEntities) : null;
        List<Retrieval.Scored> global = new ArrayList<>(
                entities != null
                        ? entities.subList(0, Math.min(kGlobal, entities.size()))
                        : g.entitySearch.nearest(q.vector(), kGlobal));
        g.factSearch
                .nearest(q.vector(), kGlobal)
                .forEach(f -> global.add(new Retrieval.Scored(ne + f.passage(), f.score())));
        global.sort(Comparator.comparingDouble((Retrieval.Scored u) -> -u.score())
                .thenComparingInt(Retrieval.Scored::passage));
        List<Integer> dense = new ArrayList<>();
        for (Retrieval.Scored u : global.subList(0, Math.min(kGlobal, global.size()))) {
            dense.add(u.passage());
        }
        List<Retrieval.Scored> local = entities != null
                ? entities.subList(0, Math.min(kLocal, entities.size()))
                : g.entitySearch.nearest(q.vector(), kLocal);
        for (Retrieval.Scored e : local) {
            if (!dense.contains(e.passage())) {
                dense.add(e.passage()); // local (target-layer) rankings follow the global ones
            }
        }
        double k0 = p.get("rrf_k");
        // every unit written below is active and listed in reached: cleared from there at the end, for the next query
        double[] s = g.unitScratch.sums();
        int rank = 0;
        for (Retrieval.Scored u : byName) {
            s[u.passage()] += 1 / (k0 + ++rank);
        }
        for (int i = 0; i < dense.size(); i++) {
            s[dense.get(i)] += 1 / (k0 + i + 1);
        }
        // the active units, kept as a list too: the diffusion visits only them, in index order, so that its sums
        // add up in the order of a scan over all units while its work follows the units the anchors reach
        boolean[] active = g.unitScratch.flags();
        Units reached = new Units();
        for (Retrieval.Scored named : byName) {
            int u = named.passage();
            if (s[u] > 0 && !active[u]) {
                active[u] = true;
                reached.add(u);
            }
        }
        for (int u : dense) {
            if (!active[u]) {
                active[u] = true;
                reached.add(u);
            }
        }
        int anchors = reached.size();
        explain.put("anchors", anchors);
        explain.put("k_global", kGlobal);
        explain.put("k_local", kLocal);
        reached.sort();
        double[] initial = chunkScores(g, s, reached);

        // 2. preference-aware bidirectional diffusion
        double gamma = p.get("gamma");
        double bias = 0;
        int depth = (int) p.get("depth");
        int iterations = 0;
        Increments increments = new Increments();
        for (int it = 0; it < depth; it++) {
            iterations++;
            // every score below is read from this iteration's start; the increments are applied after it, in order
            increments.clear();
            int activated = 0;
            // top-down: facts and relations → their entities
            reached.sort();
            int sizeBefore = reached.size();
            // HC(v) of each entity, once per iteration (scores do not change within one): a hub entity belongs to
            // thousands of facts in a large namespace, and many active facts share it
            Map<Integer, Integer> strongerOf = new HashMap<>();
            for (int i = 0; i < sizeBefore; i++) {
                int c = reached.get(i);
                if (c < ne) {
                    continue;
                }
                for (int v : members(g, c)) {
                    int n = strongerOf.computeIfAbsent(v, e -> stronger(g, e, s));
                    if (s[c] > s[v] && n > 0) {
                        increments.add(v, (s[c] - s[v]) * preference(n) * gamma);
                        if (!active[v]) {
                            active[v] = true;
                            reached.add(v);
                            activated++;
                        }
                    }
                }
            }
            // bottom-up: entities → facts and relations that pass the dynamic threshold
            reached.sort();
            int entitiesActive = reached.size();
            for (int i = 0; i < entitiesActive; i++) {
                int v = reached.get(i);
                if (v >= ne) {
                    break; // sorted: the entities come first
                }
                int facts = g.entityFacts[v].length;
                int owners = facts + g.entityRelations[v].length;
                for (int o = 0; o < owners; o++) {
                    int c = o < facts ? ne + g.entityFacts[v][o] : ne + nf + g.entityRelations[v][o - facts];
                    // counted in place: a hub entity's owners number in the thousands in a large namespace
                    int n = 0;
                    int size = 0;
                    if (c < ne + nf) {
                        MemoryGraph.Fact f = g.facts.get(c - ne);
                        if (f.head() >= 0) {
                            size++;
                            n += s[f.head()] > s[c] ? 1 : 0;
                        }
                        if (f.tail() >= 0) {
                            size++;
                            n += s[f.tail()] > s[c] ? 1 : 0;
                        }
                    } else {
                        for (int w : g.relations.get(c - ne - nf).entities()) {
                            size++;
                            n += s[w] > s[c] ? 1 : 0;
                        }
                    }
                    double share = (double) n / Math.max(1, size);
                    double tau = (c < ne + nf ? p.get("tau_l") : p.get("tau_h")) - bias;
                    if (s[v] > s[c] && share > tau) {
                        increments.add(c, (s[v] - s[c]) * (preference(n) * 0.5 + share * share * 0.5) * gamma);
                        if (!active[c]) {
                            active[c] = true;
                            reached.add(c);
                            activated++;
                        }
                    }
                }
            }
            increments.applyTo(s);
            bias = activated == 0 ? Math.min(0.5, bias + 0.05) : Math.max(0, bias - 0.05);
            if (activated == 0 && bias >= 0.5) {
                break;
            }
        }
        explain.put("diffusion_iterations", iterations);
        explain.put("final_bias", bias);
        explain.put("window_units", (int) (p.get("k_u") * depth));
        explain.put("window_chunks", (int) (p.get("k_c") * depth));
        List<Map<String, Object>> top = new ArrayList<>();
        // every unit with a score is active: the best are found among them, not in a scan over all units
        VectorIndex.TopK best = new VectorIndex.TopK(Math.min(8, reached.size()));
        for (int i = 0; i < reached.size(); i++) {
            best.offer(reached.get(i), s[reached.get(i)]);
        }
        for (Retrieval.Scored b : best.drain()) {
            int u = b.passage();
            if (s[u] > 0) {
                Map<String, Object> m2 = new HashMap<>();
                m2.put("unit", label(g, u));
                m2.put("score", s[u]);
                top.add(m2);
            }
        }
        explain.put("top_units", top);

        // 3. final chunk relevance: extended scores fused with the initial ones
        reached.sort();
        double[] extended = chunkScores(g, s, reached);
        for (int i = 0; i < reached.size(); i++) {
            s[reached.get(i)] = 0;
            active[reached.get(i)] = false;
        }
        g.unitScratch.giveBack(s);
        g.unitScratch.giveBack(active);
        double w = p.get("initial_weight");
        double[] fused = new double[g.passageCount()];
        for (int c = 0; c < fused.length; c++) {
            fused[c] = w * initial[c] + (1 - w) * extended[c];
            if (fused[c] == 0) {
                fused[c] = Double.NEGATIVE_INFINITY;
            }
        }
        List<Retrieval.Scored> ranked = new ArrayList<>(Retrieval.ranked(fused, topK));
        ranked.removeIf(r -> r.score() == Double.NEGATIVE_INFINITY);
        if (ranked.size() < topK) {
            // the hypergraph reached fewer passages than asked for: complete with the nearest by cosine
            for (Retrieval.Scored c : q.nearestPassages(g, q.vector(), topK + ranked.size())) {
                if (ranked.size() >= topK) {
                    break;
                }
                if (ranked.stream().noneMatch(r -> r.passage() == c.passage())) {
                    ranked.add(new Retrieval.Scored(c.passage(), Double.NEGATIVE_INFINITY));
                }
            }
        }
        return new Retrieval.Result(ranked, explain);
    }

    /**
     * s(c) = Σ s(v) / deg(v) over the units tied to each passage (eq. 9), from the active units in index order (every
     * unit with a score is active).
     */
    private static double[] chunkScores(MemoryGraph g, double[] s, Units active) {
        int ne = g.entityCount();
        int nf = g.factCount();
        double[] out = new double[g.passageCount()];
        for (int i = 0; i < active.size(); i++) {
            int u = active.get(i);
            if (s[u] <= 0) {
                continue;
            }
            if (u < ne) {
                if (g.entityPassages[u].length > 0) {
                    double share = s[u] / g.entityPassages[u].length;
                    for (int c : g.entityPassages[u]) {
                        out[c] += share;
                    }
                }
            } else if (u < ne + nf) {
                out[g.facts.get(u - ne).passage()] += s[u];
            } else {
                out[g.relations.get(u - ne - nf).passage()] += s[u];
            }
        }
        return out;
    }

    /** An iteration's increments to unit scores, applied in the order they were made. */
    private static final class Increments {
        private int[] units = new int[64];
        private double[] amounts = new double[64];
        private int size;

        void add(int unit, double amount) {
            if (size == units.length) {
                units = Arrays.copyOf(units, size * 2);
                amounts = Arrays.copyOf(amounts, size * 2);
            }
            units[size] = unit;
            amounts[size++] = amount;
        }

        void applyTo(double[] s) {
            for (int i = 0; i < size; i++) {
                s[units[i]] += amounts[i];
            }
        }

        void clear() {
            size = 0;
        }
    }

    /** A growable list of unit indexes. */
    private static final class Units {
        private int[] items = new int[64];
        private int size;

        void add(int u) {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
            }
            items[size++] = u;
        }

        int get(int i) {
            return items[i];
        }

        int size() {
            return size;
        }

        void sort() {
            Arrays.sort(items, 0, size);
        }
    }

    /** The entities of a fact or relation unit. */
    private static int[] members(MemoryGraph g, int unit) {
        int ne = g.entityCount();
        int nf = g.factCount();
        if (unit < ne + nf) {
            MemoryGraph.Fact f = g.facts.get(unit - ne);
            return IntStream.of(f.head(), f.tail()).filter(v -> v >= 0).toArray();
        }
        return g.relations.get(unit - ne - nf).entities();
    }

    /** HC(v, FORWARD): how many of the entity's facts and relations score above it. */
    private static int stronger(MemoryGraph g, int entity, double[] s) {
        int ne = g.entityCount();
        int nf = g.factCount();
        double own = s[entity];
        int n = 0;
        for (int f : g.entityFacts[entity]) {
            if (s[ne + f] > own) {
                n++;
            }
        }
        for (int r : g.entityRelations[entity]) {
            if (s[ne + nf + r] > own) {
                n++;
            }
        }
        return n;
    }

    /** PA(n): the preference coefficient, in [0, 1) and rising with the number of stronger neighbours. */
    private static double preference(int n) {
        return n / (n + 1.0);
    }

    private static String label(MemoryGraph g, int unit) {
        int ne = g.entityCount();
        int nf = g.factCount();
        if (unit < ne) {
            return "entity: " + g.entityNames.get(unit);
        } else if (unit < ne + nf) {
            return "fact: " + g.factText(unit - ne);
        }
        return "relation: " + g.relationText(unit - ne - nf);
    }
}
