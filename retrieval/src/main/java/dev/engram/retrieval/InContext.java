package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The dense ranking read in context: a passage whose neighbour in its session or document (the turn before or after
 * it, the passage before or after it) answers the question well is likelier to be part of the answer than its own
 * words show. A short reply ("Yes, it was the one I painted last year") says little on its own; the turn it answers
 * says what it is about. Each candidate scores its own similarity plus {@code weight} times the better of its two
 * neighbours' (a missing neighbour counts 0). Candidates are the dense ranking's top {@code depth} and their
 * neighbours; every similarity is exact.
 */
final class InContext {

    private InContext() {}

    static List<Retrieval.Scored> rerank(
            MemoryGraph g, float[] query, List<Retrieval.Scored> dense, double weight, int depth) {
        if (weight <= 0 || dense.isEmpty()) {
            return dense;
        }
        Set<Integer> candidates = new LinkedHashSet<>();
        for (Retrieval.Scored s : dense) {
            candidates.add(s.passage());
            if (g.previousInContext[s.passage()] >= 0) {
                candidates.add(g.previousInContext[s.passage()]);
            }
            if (g.nextInContext[s.passage()] >= 0) {
                candidates.add(g.nextInContext[s.passage()]);
            }
        }
        Map<Integer, Double> similarity = new HashMap<>();
        List<Retrieval.Scored> out = new ArrayList<>(candidates.size());
        for (int p : candidates) {
            double neighbour = Math.max(
                    0,
                    Math.max(
                            similarity(g, query, g.previousInContext[p], similarity),
                            similarity(g, query, g.nextInContext[p], similarity)));
            out.add(new Retrieval.Scored(p, similarity(g, query, p, similarity) + weight * neighbour));
        }
        out.sort((a, b) -> a.score() != b.score()
                ? Double.compare(b.score(), a.score())
                : Integer.compare(a.passage(), b.passage()));
        return out.size() > depth ? List.copyOf(out.subList(0, depth)) : out;
    }

    private static double similarity(MemoryGraph g, float[] query, int p, Map<Integer, Double> known) {
        if (p < 0) {
            return 0;
        }
        return known.computeIfAbsent(p, i -> g.passageVectors.dot(i, query));
    }

    /** Whether any passage of the snapshot has a neighbour (else reading in context changes nothing). */
    static boolean any(MemoryGraph g) {
        for (int p : g.nextInContext) {
            if (p >= 0) {
                return true;
            }
        }
        return false;
    }
}
