package dev.engram.retrieval;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reciprocal rank fusion (RAGA §3.6's fusion formula; per-stream weights, equal by default) of three complementary rankings: the
 * CogitoRAG diffusion ranking (structure: facts and named entities spreading over the passage–entity graph), the
 * dense ranking (meaning) and BM25 (exact words and rare names). Each stream contributes
 * {@code weight / (rrf_k + rank)} for its top {@code depth} passages. The cogito parameters apply to its stream.
 */
final class HybridMode implements Retrieval.Mode {

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
        b.put("depth", new double[] {1, 10_000});
        b.put("rrf_k", new double[] {0, 1000});
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
        Retrieval.Result b = bm25.retrieve(g, q, none, depth);
        double k = p.get("rrf_k");
        double[] fused = new double[g.passageCount()];
        Arrays.fill(fused, Double.NEGATIVE_INFINITY);
        int reached = 0;
        for (Object[] stream :
                List.of(new Object[] {c, p.get("w_cogito")}, new Object[] {d, p.get("w_dense")}, new Object[] {
                    b, p.get("w_bm25")
                })) {
            Retrieval.Result r = (Retrieval.Result) stream[0];
            double w = (Double) stream[1];
            for (int i = 0; i < r.ranked().size(); i++) {
                int passage = r.ranked().get(i).passage();
                if (fused[passage] == Double.NEGATIVE_INFINITY) {
                    fused[passage] = 0;
                    reached++;
                }
                fused[passage] += w / (k + i + 1);
            }
        }
        Map<String, Object> explain = new LinkedHashMap<>();
        explain.put("cogito", c.explanation());
        explain.put("bm25_terms", b.explanation().get("terms"));
        explain.put("fused_candidates", reached);
        return new Retrieval.Result(Retrieval.ranked(fused, Math.min(topK, reached)), explain);
    }
}
