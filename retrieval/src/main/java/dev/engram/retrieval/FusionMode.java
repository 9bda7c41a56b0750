package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RAGA §3.6 three-step fusion: vector recall of {@code k1} passages; h-hop expansion over the entity graph from the
 * entities those passages mention (hub entities linked to more than {@code max_entity_passages} passages are not
 * expanded), the reached passages ranked by how strongly they connect to the seeds — each shared entity weighs the
 * seed's reciprocal rank over the log of the entity's degree, so specific entities count and hubs do not; and
 * reciprocal rank fusion of the two rankings with constant {@code rrf_k}. When the expansion exceeds its
 * {@code timeout_ms} budget it is abandoned and the vector ranking is returned alone.
 */
final class FusionMode implements Retrieval.Mode {

    @Override
    public String name() {
        return "fusion";
    }

    @Override
    public Map<String, double[]> bounds() {
        return Map.of(
                "k1", new double[] {1, 10_000},
                "hops", new double[] {0, 10},
                "rrf_k", new double[] {0, 1000},
                "timeout_ms", new double[] {0, 60_000},
                "seed_passages", new double[] {0, 1000},
                "max_entity_passages", new double[] {1, 100_000});
    }

    @Override
    public Map<String, Double> defaults() {
        return Map.of(
                "k1",
                100.0,
                "hops",
                1.0,
                "rrf_k",
                60.0,
                "timeout_ms",
                200.0,
                "seed_passages",
                10.0,
                "max_entity_passages",
                50.0);
    }

    @Override
    public Retrieval.Result retrieve(MemoryGraph g, Retrieval.Query q, Retrieval.Params p, int topK) {
        List<Retrieval.Scored> nearest = q.nearestPassages(g, q.vector(), p.integer("k1"));
        int[] vector = nearest.stream().mapToInt(Retrieval.Scored::passage).toArray();
        long deadline = System.nanoTime() + (long) (p.get("timeout_ms") * 1e6);
        Map<String, Object> explain = new LinkedHashMap<>();
        explain.put("vector_candidates", vector.length);

        boolean[] reached = new boolean[g.passageCount()];
        boolean[] seenEntity = new boolean[g.entityCount()];
        List<Integer> frontier = new ArrayList<>();
        List<String> anchors = new ArrayList<>();
        int seeds = Math.min(p.integer("seed_passages"), vector.length);
        for (int i = 0; i < seeds; i++) {
            frontier.add(vector[i]);
        }
        boolean timedOut = false;
        int maxLinks = p.integer("max_entity_passages");
        for (int hop = 0; hop < p.integer("hops") && !timedOut; hop++) {
            List<Integer> next = new ArrayList<>();
            for (int passage : frontier) {
                for (int e : g.passageEntities[passage]) {
                    if (seenEntity[e] || g.entityPassages[e].length > maxLinks) {
                        continue;
                    }
                    seenEntity[e] = true;
                    if (anchors.size() < 20) {
                        anchors.add(g.entityNames.get(e));
                    }
                    for (int other : g.entityPassages[e]) {
                        if (!reached[other]) {
                            reached[other] = true;
                            next.add(other);
                        }
                    }
                }
                if (System.nanoTime() >= deadline) { // 0 ms: never expand
                    timedOut = true;
                    break;
                }
            }
            frontier = next;
        }
        explain.put("anchor_entities", anchors);
        if (timedOut) {
            explain.put("fallback", "graph expansion exceeded " + p.get("timeout_ms") + " ms; vector ranking only");
            return new Retrieval.Result(new ArrayList<>(nearest.subList(0, Math.min(topK, nearest.size()))), explain);
        }
        // the graph stream: passages ranked by how strongly they connect to the seeds through specific entities
        double[] graphScores = new double[g.passageCount()];
        Arrays.fill(graphScores, Double.NEGATIVE_INFINITY);
        int graphCount = 0;
        for (int i = 0; i < seeds; i++) {
            int seed = vector[i];
            double seedWeight = 1.0 / (i + 1);
            for (int e : g.passageEntities[seed]) {
                int n = g.entityPassages[e].length;
                if (n > maxLinks || n < 2) {
                    continue;
                }
                double w = seedWeight / Math.log(1 + n);
                for (int other : g.entityPassages[e]) {
                    if (graphScores[other] == Double.NEGATIVE_INFINITY) {
                        graphScores[other] = 0;
                        graphCount++;
                    }
                    graphScores[other] += w;
                }
            }
        }
        int[] graph = Retrieval.top(graphScores, graphCount);
        explain.put("graph_candidates", graphCount);
        double k = p.get("rrf_k");
        Map<Integer, Double> rrf = new HashMap<>();
        for (int i = 0; i < vector.length; i++) {
            rrf.merge(vector[i], 1 / (k + i + 1), Double::sum);
        }
        for (int i = 0; i < graph.length; i++) {
            rrf.merge(graph[i], 1 / (k + i + 1), Double::sum);
        }
        double[] fused = new double[g.passageCount()];
        Arrays.fill(fused, Double.NEGATIVE_INFINITY);
        rrf.forEach((passage, score) -> fused[passage] = score);
        return new Retrieval.Result(Retrieval.ranked(fused, Math.min(topK, rrf.size())), explain);
    }
}
