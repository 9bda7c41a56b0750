package dev.engram.retrieval;

import java.util.Map;

/** Baseline: cosine similarity between the query and passage embeddings. */
final class DenseMode implements Retrieval.Mode {

    @Override
    public String name() {
        return "dense";
    }

    @Override
    public Map<String, Double> defaults() {
        return Map.of();
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params params, int topK) {
        return new Retrieval.Result(
                q.nearestPassages(g, q.vector(), topK), Map.of("vector_search", g.passageSearch.kind()));
    }
}
