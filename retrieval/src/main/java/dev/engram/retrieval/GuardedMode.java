package dev.engram.retrieval;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A graph mode that measures, per question, how well its graph supports it, and ranks by meaning alone where the
 * support is weak. The support is {@link Retrieval#anchorSupport}: how specifically the entities the question names
 * anchor it (a question that names only hubs — a speaker of every turn, "I", a weekday — or nothing the graph holds
 * gives a diffusion nothing to start from but noise). Below {@code min_support} the dense ranking is the answer; at or
 * above it, the paper's algorithm is the path. The explanation says which it did, and why.
 */
final class GuardedMode implements Retrieval.Mode {

    static final String MIN_SUPPORT = "min_support";

    /**
     * Chosen leave-one-set-out over the four dev sets (three encyclopedic, one of conversations) for {@code cogito},
     * {@code pabd} and {@code fusion} together: every fold chose 0.95 (docs/evaluation.md).
     */
    static final double DEFAULT_MIN_SUPPORT = 0.95;

    private final Retrieval.Mode inner;
    private final double minSupport;
    private final DenseMode dense = new DenseMode();

    GuardedMode(Retrieval.Mode inner, double minSupport) {
        this.inner = inner;
        this.minSupport = minSupport;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public Map<String, Double> defaults() {
        Map<String, Double> d = new LinkedHashMap<>(inner.defaults());
        d.put(MIN_SUPPORT, minSupport);
        return Map.copyOf(d);
    }

    @Override
    public Map<String, double[]> bounds() {
        Map<String, double[]> b = new LinkedHashMap<>(inner.bounds());
        // above 1 no question has the support: the dense ranking always; 0 keeps the paper's path always
        b.put(MIN_SUPPORT, new double[] {0, 1.01});
        return Map.copyOf(b);
    }

    @Override
    public boolean usesQueryEntities() {
        return true;
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
        Retrieval.Result r = inner.retrieve(g, q, p, topK);
        explain.put("path", inner.name());
        explain.putAll(r.explanation());
        return new Retrieval.Result(r.ranked(), explain);
    }
}
