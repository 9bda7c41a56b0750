package dev.engram.retrieval;

import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reciprocal rank fusion (RAGA §3.6's fusion formula; per-stream weights, equal by default) of complementary rankings:
 * the CogitoRAG diffusion ranking (structure: facts and named entities spreading over the passage–entity graph), the
 * dense ranking (meaning), BM25 (exact words and rare names), and then the second hop of a multi-hop question: the
 * {@code bridges} entities that the {@code bridge_from} best fused passages name and the question does not ({@link
 * Bridge}), each probed as the question anchored on it, and the own page (a passage of a document titled by its name)
 * of the strongest bridge that has one placed at rank {@code bridge_page} at the latest. Each stream contributes {@code
 * weight / (rrf_k + rank)} for its top {@code depth} passages. The cogito parameters apply to its stream. The dense
 * stream reads each passage in its context ({@link InContext}): {@code context} times its best neighbour's similarity
 * is added to its own. A question that names a time ("on 16 June, 2023", "the week before August 3, 2023"; {@link
 * QuestionTime}) adds one more stream, weighted {@code w_time}: the passages whose event time falls in it, by meaning
 * ({@link InTime}). The documents whose titles the best fused passages name are one more stream, weighted {@code
 * w_links} ({@link TitleLinks}). With {@code w_como} above 0 (off by default: it about doubles the latency,
 * docs/evaluation.md), the {@code como} mode's ranking is one more stream. Last, a passage that mostly repeats the words
 * of one ranked above it is moved below the other candidates ({@link NearDuplicates}, {@code duplicate_words}).
 */
final class HybridMode implements Retrieval.Mode {

    /**
     * How much a passage's best neighbour in its session or document adds to its dense score ({@link InContext});
     * chosen by leave-one-set-out over the dev sets (docs/evaluation.md).
     */
    static final double CONTEXT = 0.1;

    /**
     * The rank the own page of the strongest bridge that has one is placed at, at the latest ({@link Bridge#placed});
     * chosen by leave-one-set-out over the dev sets (docs/evaluation.md), where 3, 4 and 5 gave the same Recall@5.
     */
    static final int BRIDGE_PAGE = 5;

    private final CogitoMode cogito = new CogitoMode();
    private final DenseMode dense = new DenseMode();
    private final Bm25Mode bm25 = new Bm25Mode();

    @Override
    public boolean usesQueryEntities() {
        return true;
    }

    @Override
    public String name() {
        return "hybrid";
    }

    @Override
    public Map<String, double[]> bounds() {
        Map<String, double[]> b = new LinkedHashMap<>(cogito.bounds());
        b.put("w_cogito", new double[] {0, 100});
        b.put("w_dense", new double[] {0, 100});
        b.put("w_bm25", new double[] {0, 100});
        b.put("w_bridge", new double[] {0, 100});
        b.put("context", new double[] {0, 1});
        b.put("w_time", new double[] {0, 100});
        b.put("depth", new double[] {1, 10_000});
        b.put("rrf_k", new double[] {0, 1000});
        b.put("bridges", new double[] {0, 10});
        b.put("bridge_from", new double[] {1, 100});
        b.put("bridge_max_degree", new double[] {2, 1_000_000});
        b.put("bridge_probe", new double[] {0, 1});
        b.put("w_como", new double[] {0, 100});
        b.put("bridge_page", new double[] {0, 100});
        b.put("w_links", new double[] {0, 100});
        b.put("links_page", new double[] {0, 100});
        b.put("duplicate_words", new double[] {0, 1});
        return Map.copyOf(b);
    }

    @Override
    public Map<String, Double> defaults() {
        Map<String, Double> d = new LinkedHashMap<>(cogito.defaults());
        d.put("w_cogito", 1.0);
        d.put("w_dense", 1.0);
        d.put("w_bm25", 1.0);
        d.put("rrf_k", 10.0);
        d.put("depth", 40.0);
        d.put("w_bridge", 1.0);
        d.put("bridges", 3.0);
        d.put("bridge_from", 3.0);
        d.put("bridge_max_degree", 50.0);
        d.put("bridge_probe", 1.0);
        d.put("w_como", 0.0);
        d.put("bridge_page", (double) BRIDGE_PAGE);
        d.put("w_links", 1.0);
        d.put("links_page", 0.0);
        d.put("duplicate_words", NearDuplicates.THRESHOLD);
        d.put("context", CONTEXT);
        d.put("w_time", 2.0);
        return Map.copyOf(d);
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        int depth = Math.max(topK, p.integer("depth"));
        Map<String, Double> cogitoValues = new LinkedHashMap<>();
        cogito.defaults().keySet().forEach(k -> cogitoValues.put(k, p.get(k)));
        Retrieval.Params none = new Retrieval.Params(Map.of());
        Retrieval.Result c = cogito.retrieve(g, q, new Retrieval.Params(cogitoValues), depth);
        Retrieval.Result d = dense.retrieve(g, q, none, depth);
        List<Retrieval.Scored> meaning = InContext.rerank(g, q.vector(), d.ranked(), p.get("context"), depth);
        Retrieval.Result b = bm25.retrieve(g, q, none, depth);
        double k = p.get("rrf_k");
        double[] fused = new double[g.passageCount()];
        Arrays.fill(fused, Double.NEGATIVE_INFINITY);
        int reached = addStream(fused, c.ranked(), p.get("w_cogito"), k)
                + addStream(fused, meaning, p.get("w_dense"), k)
                + addStream(fused, b.ranked(), p.get("w_bm25"), k);
        Map<String, Object> explain = new LinkedHashMap<>();
        if (p.get("w_como") > 0) {
            // como's ranking with its own defaults (its rrf_k and with_dense would collide with hybrid's and cogito's),
            // by the registered mode, whose episodic windows per snapshot are computed once for both
            Retrieval.Mode como = Retrieval.mode("como");
            // its evidence-only form, also with an LLM configured: a stream of the fusion makes no LLM calls
            // near copies are moved once, in the fused ranking, not in this stream too
            Map<String, Double> comoValues = new LinkedHashMap<>(como.defaults());
            comoValues.put("duplicate_words", 0.0);
            Retrieval.Result m = como.retrieve(g, q.withReasoner(null), new Retrieval.Params(comoValues), depth);
            reached += addStream(fused, m.ranked(), p.get("w_como"), k);
            explain.put("como", m.explanation());
        }
        QuestionTime.Window window = p.get("w_time") > 0 ? QuestionTime.of(q.text()) : null;
        if (window != null) {
            reached += addStream(fused, InTime.rank(g, q.vector(), window, depth), p.get("w_time"), k);
            explain.put("time", InTime.explain(g, window));
        }
        List<Retrieval.Scored> links = List.of(); // the documents the best passages name by their titles
        if (p.get("w_links") > 0 || p.integer("links_page") > 0) {
            links = TitleLinks.byMeaning(
                    g,
                    q.vector(),
                    g.titleLinks.linked(
                            g,
                            Arrays.stream(Retrieval.top(fused, p.integer("bridge_from")))
                                    .filter(i -> fused[i] > Double.NEGATIVE_INFINITY)
                                    .toArray()));
            explain.put(
                    "links",
                    links.stream()
                            .map(s -> g.passage(s.passage()).title())
                            .distinct()
                            .toList());
        }
        int probes = p.integer("bridges");
        List<Integer> pages = List.of(); // the strongest bridge's own page, when one has any
        if (probes > 0) {
            Set<Integer> named = new HashSet<>();
            for (int e : q.entities()) {
                named.add(e);
            }
            List<Integer> cues = Bridge.cues(
                    g, fused, p.integer("bridge_from"), named, q.text(), probes, p.integer("bridge_max_degree"));
            List<Retrieval.Scored> second =
                    Retrieval.ranked(Bridge.secondHop(g, q, cues, depth, p.get("bridge_probe") > 0), depth);
            if (p.integer("bridge_page") > 0) {
                pages = Bridge.pages(g, cues);
                second = Bridge.leading(pages, second);
            }
            reached += addStream(fused, second, p.get("w_bridge"), k);
            explain.put("bridges", cues.stream().map(g.entityNames::get).toList());
        }
        if (p.get("w_links") > 0) {
            reached += addStream(fused, links.subList(0, Math.min(depth, links.size())), p.get("w_links"), k);
        }
        explain.put("anchor_support", Retrieval.anchorSupport(g, q.entities()));
        explain.put("cogito", c.explanation());
        explain.put("bm25_terms", b.explanation().get("terms"));
        explain.put("fused_candidates", reached);
        double copies = p.get("duplicate_words");
        NearDuplicates.Spread spread = NearDuplicates.spread(
                g, Retrieval.ranked(fused, Math.min(copies > 0 ? depth : topK, reached)), copies, topK);
        if (copies > 0) {
            explain.put("near_copies_moved_down", spread.movedDown());
        }
        List<Retrieval.Scored> out = spread.ranked();
        if (!pages.isEmpty()) {
            List<Retrieval.Scored> placed = Bridge.placed(out, pages, fused, p.integer("bridge_page"), topK);
            Map<String, Object> page = new LinkedHashMap<>();
            page.put("title", g.passage(pages.get(0)).title());
            page.put("placed", placed != out);
            page.put("at_most", p.integer("bridge_page"));
            explain.put("bridge_page", page);
            out = placed;
        }
        if (!links.isEmpty() && p.integer("links_page") > 0) {
            out = Bridge.placed(out, List.of(links.get(0).passage()), fused, p.integer("links_page"), topK);
        }
        return new Retrieval.Result(out, explain);
    }

    /** Adds {@code weight / (k + rank)} for each passage of {@code ranking}; returns how many it reached first. */
    private static int addStream(double[] fused, List<Retrieval.Scored> ranking, double weight, double k) {
        int reached = 0;
        for (int i = 0; i < ranking.size(); i++) {
            int passage = ranking.get(i).passage();
            if (fused[passage] == Double.NEGATIVE_INFINITY) {
                fused[passage] = 0;
                reached++;
            }
            fused[passage] += weight / (k + i + 1);
        }
        return reached;
    }
}
