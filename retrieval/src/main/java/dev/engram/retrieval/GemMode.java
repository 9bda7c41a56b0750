package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * GEM-RAG (Algorithm 1): every node of the graphical eigen memory — each passage, and each eigen-theme summary node —
 * is represented by its utility questions; nodes are taken best first by the similarity of their best utility
 * question to the prompt until the budget (top-k) is spent. A theme node brings its member passages, strongest first.
 * A passage without utility questions is represented by its own vector (the paper's zero-question case).
 */
final class GemMode implements Retrieval.Mode {

    @Override
    public String name() {
        return "gem";
    }

    @Override
    public Map<String, Double> defaults() {
        return Map.of("themes", 1.0, "passage_fallback", 1.0);
    }

    @Override
    public Map<String, double[]> bounds() {
        return Map.of("themes", new double[] {0, 1}, "passage_fallback", new double[] {0, 1});
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        int n = g.passageCount();
        boolean useThemes = p.get("themes") > 0;
        boolean fallback = p.get("passage_fallback") > 0;
        // node scores: passages first, then themes
        int themeCount = useThemes ? g.themes.size() : 0;
        double[] score = new double[n + themeCount];
        Arrays.fill(score, Double.NEGATIVE_INFINITY);
        // a passage scores its best utility question: the nearest questions, enough of them to name topK passages
        List<Retrieval.Scored> questions = g.questionSearch.nearest(q.vector(), topK * g.maxQuestionsPerPassage);
        for (Retrieval.Scored hit : questions) {
            int passage = g.questionPassage[hit.passage()];
            score[passage] = Math.max(score[passage], hit.score());
        }
        if (fallback) {
            for (Retrieval.Scored hit : g.barePassageSearch.nearest(q.vector(), topK)) {
                score[hit.passage()] = hit.score(); // the zero-question case: the passage's own vector
            }
        }
        for (int t = 0; t < themeCount; t++) {
            double s = Double.NEGATIVE_INFINITY;
            for (float[] v : g.themes.get(t).questionVectors()) {
                s = Math.max(s, Retrieval.dot(q.vector(), v));
            }
            score[n + t] = s;
        }
        // best first over the nodes reached until the budget is spent
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < score.length; i++) {
            if (score[i] > Double.NEGATIVE_INFINITY) {
                order.add(i);
            }
        }
        order.sort((a, b) -> Double.compare(score[b], score[a]));
        boolean[] taken = new boolean[n];
        List<Retrieval.Scored> ranked = new ArrayList<>();
        List<Map<String, Object>> path = new ArrayList<>();
        for (int node : order) {
            if (ranked.size() >= topK) {
                break;
            }
            if (node < n) {
                if (!taken[node]) {
                    taken[node] = true;
                    ranked.add(new Retrieval.Scored(node, score[node]));
                    path.add(Map.of(
                            "node", "passage", "passage_id", g.passage(node).id(), "score", score[node]));
                }
                continue;
            }
            MemoryGraph.ThemeNode theme = g.themes.get(node - n);
            List<String> brought = new ArrayList<>();
            for (int m : theme.members()) {
                if (ranked.size() >= topK) {
                    break;
                }
                if (!taken[m]) {
                    taken[m] = true;
                    ranked.add(new Retrieval.Scored(m, score[node]));
                    brought.add(g.passage(m).id());
                }
            }
            path.add(Map.of("node", "theme", "rank", theme.rank(), "score", score[node], "passages", brought));
        }
        Map<String, Object> explain = new LinkedHashMap<>();
        if (!questions.isEmpty()) {
            Retrieval.Scored best = questions.get(0);
            int passage = g.questionPassage[best.passage()];
            int ordinal = 0;
            while (best.passage() - ordinal - 1 >= 0 && g.questionPassage[best.passage() - ordinal - 1] == passage) {
                ordinal++;
            }
            explain.put(
                    "best_question",
                    Map.of("passage_id", g.passage(passage).id(), "question", ordinal, "score", best.score()));
        }
        explain.put("vector_search", g.questionSearch.kind());
        explain.put("theme_nodes", themeCount);
        explain.put("path", path);
        return new Retrieval.Result(ranked, explain);
    }
}
