package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GistsTest {

    @Test
    void aLeadIsTheFirstSentenceOfAMemory() {
        assertThat(Gists.lead("Ada wrote notes. She died in 1852.")).isEqualTo("Ada wrote notes.");
        assertThat(Gists.lead("It cost $3.50 in 1843. Then more.")).isEqualTo("It cost $3.50 in 1843.");
        assertThat(Gists.lead("Who? \"Ada\" did.")).isEqualTo("Who?");
        assertThat(Gists.lead("Ends here.  \n 1852 begins the next.")).isEqualTo("Ends here.");
        assertThat(Gists.lead("a. b. c")).isEqualTo("a. b. c");
        assertThat(Gists.lead("x".repeat(400))).hasSize(300).endsWith("…");
        assertThat(Gists.lead(null)).isEmpty();
    }

    /** Memories built to make a backtracking engine take quadratic time: their lead is found at once. */
    @Test
    void hostileMemoriesAreReadInLinearTime() {
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            Gists.lead(". ".repeat(500_000));
            Gists.lead("." + " ".repeat(1_000_000) + "x");
            Gists.lead(".\t".repeat(500_000) + "A");
        });
    }
}
