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
 * above it, the paper's algorithm is the path. The explanation says which it did, and why. Whichever path it took, a
 * passage that mostly repeats the words of one ranked above it then waits below the other candidates ({@link
 * NearDuplicates}, {@code duplicate_words}; 0 turns it off).
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

    /** How alike in words a passage must be to one ranked above it to be moved down ({@link NearDuplicates}). */
    static final String DUPLICATE_WORDS = "duplicate_words";

    private final Retrieval.Mode inner;
    private final double minSupport;
    private final double withDense;
    private final DenseMode dense = new DenseMode();

    private final double duplicateWords;

    GuardedMode(Retrieval.Mode inner, double minSupport, double withDense, double duplicateWords) {
        this.inner = inner;
        this.minSupport = minSupport;
        this.withDense = withDense;
        this.duplicateWords = duplicateWords;
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
        d.put(DUPLICATE_WORDS, duplicateWords);
        return Map.copyOf(d);
    }

    @Override
    public Map<String, double[]> bounds() {
        Map<String, double[]> b = new LinkedHashMap<>(inner.bounds());
        // above 1 no question has the support: the dense ranking always; 0 keeps the paper's path always
        b.put(MIN_SUPPORT, new double[] {0, 1.01});
        b.put(WITH_DENSE, new double[] {0, 100});
        b.put(DUPLICATE_WORDS, new double[] {0, 1});
        return Map.copyOf(b);
    }

    @Override
    public boolean usesQueryEntities() {
        return true; // the support is measured on them
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        double copies = p.get(DUPLICATE_WORDS);
        // near-copies wait below the other candidates: the ranking goes deeper than topK to have some
        int depth = copies > 0 ? Math.max(topK, FUSED_DEPTH) : topK;
        Map<String, Object> explain = new LinkedHashMap<>();
        List<Retrieval.Scored> ranked = ranked(g, q, p, depth, explain);
        NearDuplicates.Spread spread = NearDuplicates.spread(g, ranked, copies, topK);
        if (copies > 0) {
            explain.put("near_copies_moved_down", spread.movedDown());
        }
        return new Retrieval.Result(spread.ranked(), explain);
    }

    /** The ranking of the path the support chose, its top {@code topK}; what it did goes into {@code explain}. */
    private List<Retrieval.Scored> ranked(
            MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK, Map<String, Object> explain) {
        double support = Retrieval.anchorSupport(g, q.entities());
        double threshold = p.get(MIN_SUPPORT);
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
            return d.ranked();
        }
        double withDense = p.get(WITH_DENSE);
        if (withDense <= 0) {
            Retrieval.Result r = inner.retrieve(g, q, p, topK);
            explain.put("path", inner.name());
            explain.putAll(r.explanation());
            return r.ranked();
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
        return ranked;
    }
}
