package dev.engram.retrieval;

import java.util.Map;

/** Baseline: Okapi BM25 over title and text (k1 = 1.2, b = 0.75). */
final class Bm25Mode implements Retrieval.Mode {

    @Override
    public String name() {
        return "bm25";
    }

    @Override
    public Map<String, Double> defaults() {
        return Map.of();
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params params, int topK) {
        return new Retrieval.Result(
                Retrieval.ranked(g.bm25.scores(q.text()), topK), Map.of("terms", Bm25.tokens(q.text())));
    }
}
