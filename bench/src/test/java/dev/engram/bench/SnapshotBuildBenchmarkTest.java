package dev.engram.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The layout benchmark builds the namespace it describes, round after round, and writes what it timed. */
class SnapshotBuildBenchmarkTest {

    @Test
    void buildsTheSyntheticNamespaceEachRoundAndWritesItsTimes(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("snapshot.json");
        SnapshotBuildBenchmark.main(
                new String[] {"--passages", "300", "--rounds", "2", "--dims", "8", "--out", out.toString()});
        JsonNode result = Json.mapper().readTree(Files.readString(out));
        assertThat(result.path("passages").asInt()).isEqualTo(300);
        assertThat(result.path("rounds")).hasSize(3); // round 0 fills the term cache, then the two timed
        for (JsonNode round : result.path("rounds")) {
            assertThat(round.path("passages").asInt()).isEqualTo(300);
            // eight mentions a passage among 600 entities, skewed: many are shared, none is declared twice
            assertThat(round.path("entities").asInt()).isBetween(50, 600);
            assertThat(round.path("facts").asInt()).isEqualTo(600);
            assertThat(round.path("build_seconds").asDouble()).isPositive();
        }
        assertThat(result.path("fill_and_build_seconds_min").asDouble())
                .isLessThanOrEqualTo(
                        result.path("fill_and_build_seconds_median").asDouble());
    }
}
