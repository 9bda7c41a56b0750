package dev.engram.stores;

import java.time.Instant;
import java.util.List;

/**
 * GEM-RAG eigen-themes of a namespace: the leading eigenvectors of the normalized Laplacian of its utility-question
 * similarity graph, each as a summary node over its strongest passages. Recomputed when enough of the namespace has
 * changed since {@code version}.
 *
 * @param passages passages the graph was built over
 * @param essential the number of essential themes by the eigen-gap rule
 */
public record ThemeSet(
        String namespace, long version, int passages, int essential, List<Theme> themes, Instant computedAt) {

    public ThemeSet {
        themes = themes == null ? List.of() : List.copyOf(themes);
    }

    /** One theme: eigenvalue, member passages (strongest first) with their weights, summary and questions. */
    public record Theme(
            int rank,
            double eigenvalue,
            List<String> passageIds,
            List<Double> weights,
            String summary,
            List<String> questions) {
        public Theme {
            passageIds = passageIds == null ? List.of() : List.copyOf(passageIds);
            weights = weights == null ? List.of() : List.copyOf(weights);
            questions = questions == null ? List.of() : List.copyOf(questions);
        }
    }
}
