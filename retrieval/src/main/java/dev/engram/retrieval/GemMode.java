package dev.engram.retrieval;

import java.util.ArrayList;
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
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        int n = g.passageCount();
        boolean useThemes = p.get("themes") > 0;
        boolean fallback = p.get("passage_fallback") > 0;
        // node scores: passages first, then themes
        int themeCount = useThemes ? g.themes.size() : 0;
        double[] score = new double[n + themeCount];
        int bestPassage = -1;
        int bestQuestion = -1;
        double best = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            float[][] qs = g.passageQuestions[i];
            double s = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < qs.length; j++) {
                double c = Retrieval.dot(q.vector(), qs[j]);
                if (c > s) {
                    s = c;
                    if (c > best) {
                        best = c;
                        bestPassage = i;
                        bestQuestion = j;
                    }
                }
            }
            if (qs.length == 0 && fallback) {
                s = Retrieval.dot(q.vector(), g.passageVectors[i]);
            }
            score[i] = s;
        }
        for (int t = 0; t < themeCount; t++) {
            double s = Double.NEGATIVE_INFINITY;
            for (float[] v : g.themes.get(t).questionVectors()) {
                s = Math.max(s, Retrieval.dot(q.vector(), v));
            }
            score[n + t] = s;
        }
        // best first over all nodes until the budget is spent
        Integer[] order = new Integer[score.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> Double.compare(score[b], score[a]));
        boolean[] taken = new boolean[n];
        List<Retrieval.Scored> ranked = new ArrayList<>();
        List<Map<String, Object>> path = new ArrayList<>();
        for (int node : order) {
            if (ranked.size() >= topK || score[node] == Double.NEGATIVE_INFINITY) {
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
        if (bestPassage >= 0) {
            explain.put(
                    "best_question",
                    Map.of("passage_id", g.passage(bestPassage).id(), "question", bestQuestion, "score", best));
        }
        explain.put("theme_nodes", themeCount);
        explain.put("path", path);
        return new Retrieval.Result(ranked, explain);
    }
}
