package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntPredicate;
import org.apache.lucene.util.VectorUtil;

/** The retrieval modes over a {@link MemoryGraph}, their parameters, and the shared ranking helpers. */
public final class Retrieval {

    /**
     * A query: its text, its embedding, the embedder for sub-queries (same model as the passages), the entities of
     * the graph that the query names (by normalized name; empty when unknown), an optional decomposer (returning
     * null when it cannot help), optional LLM agents, and which passages of the snapshot are still in memory (a
     * snapshot may lag the stores: a passage deleted since is never shown to an LLM).
     */
    public record Query(
            String text,
            float[] vector,
            Function<String, float[]> embedder,
            int[] entities,
            Function<String, List<String>> decomposer,
            Reasoner reasoner,
            IntPredicate live,
            RequestWork work) {

        public Query {
            live = live == null ? passage -> true : live;
            work = work == null ? new RequestWork() : work;
        }

        /** A query by its text, its vector and the embedder of sub-queries; nothing else known of it. */
        public static Query of(String text, float[] vector, Function<String, float[]> embedder) {
            return new Query(text, vector, embedder, new int[0], null, null, null, null);
        }

        /** The same query, naming these entities of the graph. */
        public Query withEntities(int[] named) {
            return new Query(text, vector, embedder, named, decomposer, reasoner, live, work);
        }

        /** The same query, split into sub-questions by {@code splitter} (which returns null when it cannot help). */
        public Query withDecomposer(Function<String, List<String>> splitter) {
            return new Query(text, vector, embedder, entities, splitter, reasoner, live, work);
        }

        /** The same query, with the LLM agents of ComoRAG's loop. */
        public Query withReasoner(Reasoner agents) {
            return new Query(text, vector, embedder, entities, decomposer, agents, live, work);
        }

        /** The same query, showing an LLM only the passages {@code inMemory} accepts. */
        public Query withLive(IntPredicate inMemory) {
            return new Query(text, vector, embedder, entities, decomposer, reasoner, inMemory, work);
        }

        /** Sub-questions: the configured decomposer's (an LLM), or the rule-based split of comparisons. */
        public List<String> subQueries() {
            if (decomposer != null) {
                List<String> parts = decomposer.apply(text);
                if (parts != null) {
                    return parts;
                }
            }
            return QueryDecomposition.split(text);
        }

        /** The {@code k} passages nearest to {@code v}, searched once per vector and request (see {@link RequestWork}). */
        List<Scored> nearestPassages(MemoryGraph g, float[] v, int k) {
            return work.nearestPassages(g, v, k);
        }

        /** The vectors of {@code texts} by the query's embedder, embedded side by side. */
        List<float[]> embedAll(List<String> texts) {
            return RequestWork.embedAll(embedder, texts);
        }
    }

    /** A passage index with its score. */
    public record Scored(int passage, double score) {}

    /** Ranked passages (best first) and how the mode arrived at them. */
    public record Result(List<Scored> ranked, Map<String, Object> explanation) {}

    /** A retrieval mode. */
    /**
     * The LLM agents of ComoRAG's reasoning loop (§2.3, App. D), when an LLM is configured: self-probing, cue
     * writing (how a probe's evidence helps the question), memory fusion and try-answer.
     */
    public interface Reasoner {
        /** Up to {@code n} new probes that do not repeat {@code pastProbes}, guided by the pool's cues. */
        List<String> probe(String question, List<String> pastProbes, List<String> cues, int n);

        /** A cue: the key findings of {@code evidence} (retrieved for {@code probe}) towards the question. */
        String cue(String question, String probe, List<String> evidence);

        /** One narrative fusing past cues towards the question. */
        String fuse(String question, List<String> cues);

        /** The answer from the evidence and the fused history, or null when they do not answer it yet. */
        String tryAnswer(String question, List<String> evidence, String history);
    }

    public interface Mode {
        String name();

        /** Parameter defaults, from the paper the mode comes from; a request may override any of them. */
        Map<String, Double> defaults();

        Result retrieve(MemoryGraph graph, Query query, Params params, int topK);

        /** Allowed ranges [min, max] of parameters that bound work or index arrays; others are any finite number. */
        default Map<String, double[]> bounds() {
            return Map.of();
        }

        /** Whether the mode reads the entities the query names; callers skip finding them otherwise. */
        default boolean usesQueryEntities() {
            return false;
        }
    }

    /** Parameters of one request: the mode's defaults overridden by the request's values. */
    public record Params(Map<String, Double> values) {
        public double get(String name) {
            Double v = values.get(name);
            if (v == null) {
                throw new IllegalArgumentException("unknown parameter " + name);
            }
            return v;
        }

        public int integer(String name) {
            return (int) Math.round(get(name));
        }
    }

    private static final Map<String, Mode> MODES = new LinkedHashMap<>();

    static {
        for (Mode m : List.of(
                new DenseMode(),
                new Bm25Mode(),
                // with_dense per mode chosen leave-one-set-out over the dev sets (docs/evaluation.md)
                new GuardedMode(new FusionMode(), GuardedMode.DEFAULT_MIN_SUPPORT, 5, NearDuplicates.THRESHOLD),
                new GuardedMode(new CogitoMode(), GuardedMode.DEFAULT_MIN_SUPPORT, 1, NearDuplicates.THRESHOLD),
                new HybridMode(),
                new GuardedMode(new PabdMode(), GuardedMode.DEFAULT_MIN_SUPPORT, 8, NearDuplicates.THRESHOLD),
                new GuardedMode(new ComoMode(), 0, 0, NearDuplicates.THRESHOLD),
                new GuardedMode(new GemMode(), 0, 2, NearDuplicates.THRESHOLD))) {
            MODES.put(m.name(), m);
        }
    }

    private Retrieval() {}

    public static Set<String> modes() {
        return MODES.keySet();
    }

    public static Mode mode(String name) {
        Mode m = MODES.get(name);
        if (m == null) {
            throw new IllegalArgumentException("unknown mode '" + name + "'; available: " + String.join(", ", modes()));
        }
        return m;
    }

    /**
     * A mode, possibly with parameters, as tools name it: {@code hybrid} or {@code hybrid:w_dense=0.7:rrf_k=20}.
     */
    public record Variant(String mode, Map<String, Double> params) {

        /** Reads a variant; refuses unknown modes and parameters, and values that are no numbers or out of bounds. */
        public static Variant parse(String spec) {
            String[] parts = spec.split(":");
            Map<String, Double> params = new LinkedHashMap<>();
            for (int i = 1; i < parts.length; i++) {
                String[] kv = parts[i].split("=", 2);
                if (kv.length != 2) {
                    throw new IllegalArgumentException("expected name=value after ':' in '" + spec + "'");
                }
                try {
                    params.put(kv[0].strip(), Double.parseDouble(kv[1].strip()));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("parameter '" + kv[0] + "' in '" + spec + "' is not a number");
                }
            }
            Retrieval.params(Retrieval.mode(parts[0].strip()), params); // refuses unknown modes and parameters
            return new Variant(parts[0].strip(), Collections.unmodifiableMap(params));
        }
    }

    /** The mode's defaults with {@code overrides} applied; unknown names and non-finite values are refused. */
    public static Params params(Mode mode, Map<String, Double> overrides) {
        Map<String, Double> values = new LinkedHashMap<>(mode.defaults());
        for (Map.Entry<String, Double> e : overrides.entrySet()) {
            if (!values.containsKey(e.getKey())) {
                throw new IllegalArgumentException("mode '" + mode.name() + "' has no parameter '" + e.getKey()
                        + "'; parameters: " + String.join(", ", values.keySet()));
            }
            if (e.getValue() == null || !Double.isFinite(e.getValue())) {
                throw new IllegalArgumentException("parameter '" + e.getKey() + "' must be a finite number");
            }
            double[] range = mode.bounds().get(e.getKey());
            if (range != null && (e.getValue() < range[0] || e.getValue() > range[1])) {
                throw new IllegalArgumentException(
                        "parameter '" + e.getKey() + "' must be between " + range[0] + " and " + range[1]);
            }
            values.put(e.getKey(), e.getValue());
        }
        return new Params(Map.copyOf(values));
    }

    // ---- shared helpers ----------------------------------------------------------------------------------------

    /** The inner product, vectorized (SIMD) where the JVM allows it. */
    static double dot(float[] a, float[] b) {
        return VectorUtil.dotProduct(a, b);
    }

    /** Cosine of the query with one passage (vectors are unit length). */
    static double cosine(MemoryGraph g, int passage, float[] q) {
        float[] v = g.passageVectors.get(passage);
        if (v.length != q.length) {
            throw new IllegalStateException("passage " + g.passages.get(passage).id() + " has " + v.length
                    + " dimensions but the query has " + q.length + "; re-embed the namespace");
        }
        return dot(q, v);
    }

    /** The indices of the {@code k} highest scores, best first (ties by index). */
    static int[] top(double[] scores, int k) {
        VectorIndex.TopK best = new VectorIndex.TopK(Math.min(k, scores.length));
        for (int i = 0; i < scores.length; i++) {
            best.offer(i, scores[i]);
        }
        return best.drain().stream().mapToInt(Scored::passage).toArray();
    }

    /**
     * How specifically the graph anchors a query: over the entities it names, the largest specificity {@code 1 −
     * ln(passages mentioning it) / ln(passages)}, from 1 (an entity of one passage) to 0 (one in every passage, or
     * none named). A question that names only hubs ("I", a speaker of every turn, a weekday) gives the graph little
     * to go on.
     */
    public static double anchorSupport(MemoryGraph g, int[] entities) {
        int n = g.passageCount();
        if (n < 2) {
            return 0;
        }
        double best = 0;
        for (int e : entities) {
            int degree = Math.max(1, g.entityPassages[e].length);
            best = Math.max(best, 1 - Math.log(degree) / Math.log(n));
        }
        return best;
    }

    /** The {@code k} best passages by score, leaving out those scored −∞ (not reached). */
    static List<Scored> ranked(double[] scores, int k) {
        List<Scored> out = new ArrayList<>();
        for (int p : top(scores, k)) {
            if (scores[p] != Double.NEGATIVE_INFINITY) {
                out.add(new Scored(p, scores[p]));
            }
        }
        return out;
    }

    /** Min–max normalization over the candidates; others are left at 0. */
    static double[] minMax(double[] x, boolean[] candidate, double delta) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < x.length; i++) {
            if (candidate[i]) {
                min = Math.min(min, x[i]);
                max = Math.max(max, x[i]);
            }
        }
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            if (candidate[i]) {
                out[i] = (x[i] - min) / (max - min + delta);
            }
        }
        return out;
    }
}
