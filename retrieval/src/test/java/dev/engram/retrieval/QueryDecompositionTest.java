package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class QueryDecompositionTest {

    @Test
    void splitsAComparisonIntoOneQueryPerAlternative() {
        assertThat(QueryDecomposition.split("Which film came out first, Agni or Arrête ton cinéma?"))
                .containsExactly("Which film came out first Agni?", "Which film came out first Arrête ton cinéma?");
        assertThat(QueryDecomposition.split("Who was born first: Ada Lovelace or Charles Babbage?"))
                .containsExactly("Who was born first Ada Lovelace?", "Who was born first Charles Babbage?");
        assertThat(QueryDecomposition.split("Who directed Agni?")).isEmpty();
    }

    /**
     * Queries at the length limit (4,096 characters) that take a backtracking engine cubic time: answered at once (the
     * limit is a hang detector, far above the time taken).
     */
    @Test
    void hostileQueriesAtTheLengthLimitAreSplitInLinearTime() {
        List<String> hostile = List.of(
                "which a" + " or a".repeat(817) + " ?x",
                "which" + " or".repeat(1363),
                "which first, " + "a or ".repeat(816) + "b?",
                "who " + ",".repeat(2000) + " or " + " ".repeat(2000) + "?");
        for (String q : hostile) {
            assertThat(q.length()).isLessThanOrEqualTo(4096);
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> QueryDecomposition.split(q));
        }
        assertThat(QueryDecomposition.split("which first, a or b?"))
                .containsExactly("which first a?", "which first b?");
    }
}
