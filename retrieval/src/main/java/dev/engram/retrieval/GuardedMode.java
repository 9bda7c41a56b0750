package dev.engram.retrieval;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A graph mode that measures, per question, how well its graph supports it, ranks by meaning alone where the support
 * is weak, and where it is strong fuses its own ranking with the dense one when {@code with_dense} is above 0
 * (reciprocal ranks, the dense ranking weighted {@code with_dense}). The support is {@link Retrieval#anchorSupport}: how specifically the entities the question names
 * anchor it (a question that names only hubs — a speaker of every turn, "I", a weekday — or nothing the graph holds
 * gives a diffusion nothing to start from but noise). Below {@code min_support} the dense ranking is the answer; at or
 * above it, the paper's algorithm is the path. The explanation says which it did, and why.
 */
final class GuardedMode implements Retrieval.Mode {

    static final String MIN_SUPPORT = "min_support";

    /** The weight of the dense ranking fused (reciprocal ranks) with the mode's own where the graph supports it. */
    static final String WITH_DENSE = "with_dense";

    /** Ranks of the two rankings fused, and the constant of the fusion (as {@code hybrid}'s). */
    private static final int FUSED_DEPTH = 40;

    private static final double RRF_K = 10;

    /**
     * Chosen leave-one-set-out over the four dev sets (three encyclopedic, one of conversations) for {@code cogito},
     * {@code pabd} and {@code fusion} together: every fold chose 0.95 (docs/evaluation.md).
     */
    static final double DEFAULT_MIN_SUPPORT = 0.95;

    private final Retrieval.Mode inner;
    private final double minSupport;
    private final double withDense;
    private final DenseMode dense = new DenseMode();

    GuardedMode(Retrieval.Mode inner, double minSupport, double withDense) {
        this.inner = inner;
        this.minSupport = minSupport;
        this.withDense = withDense;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public Map<String, Double> defaults() {
        Map<String, Double> d = new LinkedHashMap<>(inner.defaults());
        d.put(MIN_SUPPORT, minSupport);
        d.put(WITH_DENSE, withDense);
        return Map.copyOf(d);
    }

    @Override
    public Map<String, double[]> bounds() {
        Map<String, double[]> b = new LinkedHashMap<>(inner.bounds());
        // above 1 no question has the support: the dense ranking always; 0 keeps the paper's path always
        b.put(MIN_SUPPORT, new double[] {0, 1.01});
        b.put(WITH_DENSE, new double[] {0, 100});
        return Map.copyOf(b);
    }

    @Override
    public boolean usesQueryEntities() {
        return true; // the support is measured on them
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        double support = Retrieval.anchorSupport(g, q.entities());
        double threshold = p.get(MIN_SUPPORT);
        Map<String, Object> explain = new LinkedHashMap<>();
        explain.put("anchor_support", support);
        explain.put(MIN_SUPPORT, threshold);
        if (support < threshold) {
            Retrieval.Result d = dense.retrieve(g, q, new Retrieval.Params(Map.of()), topK);
            explain.put("path", "dense");
            explain.put(
                    "why",
                    q.entities().length == 0
                            ? "the question names no entity of the graph"
                            : "the entities the question names are too common in the graph to anchor it");
            return new Retrieval.Result(d.ranked(), explain);
        }
        double withDense = p.get(WITH_DENSE);
        if (withDense <= 0) {
            Retrieval.Result r = inner.retrieve(g, q, p, topK);
            explain.put("path", inner.name());
            explain.putAll(r.explanation());
            return new Retrieval.Result(r.ranked(), explain);
        }
        int depth = Math.max(topK, FUSED_DEPTH);
        Retrieval.Result r = inner.retrieve(g, q, p, depth);
        Retrieval.Result d = dense.retrieve(g, q, new Retrieval.Params(Map.of()), depth);
        Map<Integer, Double> fused = new LinkedHashMap<>();
        for (int i = 0; i < r.ranked().size(); i++) {
            fused.merge(r.ranked().get(i).passage(), 1.0 / (RRF_K + i + 1), Double::sum);
        }
        for (int i = 0; i < d.ranked().size(); i++) {
            fused.merge(d.ranked().get(i).passage(), withDense / (RRF_K + i + 1), Double::sum);
        }
        List<Retrieval.Scored> ranked = fused.entrySet().stream()
                .map(e -> new Retrieval.Scored(e.getKey(), e.getValue()))
                .sorted((a, b) -> a.score() != b.score()
                        ? Double.compare(b.score(), a.score())
                        : Integer.compare(a.passage(), b.passage()))
                .limit(topK)
                .toList();
        explain.putAll(r.explanation());
        explain.put("path", inner.name() + "+dense"); // after the mode's own keys: gem has a path of its own
        return new Retrieval.Result(ranked, explain);
    }
}
