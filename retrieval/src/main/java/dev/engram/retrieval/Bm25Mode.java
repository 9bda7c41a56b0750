package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
        int k = Math.min(topK, g.passageCount());
        List<Retrieval.Scored> ranked = new ArrayList<>(g.bm25.top(q.text(), k));
        if (ranked.size() < k) {
            // fewer passages share a word with the question than asked for: the rest score 0, in passage order
            Set<Integer> taken = new HashSet<>();
            ranked.forEach(s -> taken.add(s.passage()));
            for (int passage = 0; ranked.size() < k; passage++) {
                if (!taken.contains(passage)) {
                    ranked.add(new Retrieval.Scored(passage, 0));
                }
            }
        }
        return new Retrieval.Result(ranked, Map.of("terms", Bm25.tokens(q.text())));
    }
}
