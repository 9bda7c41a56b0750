package dev.engram.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchOptionsTest {

    @Test
    void aBenchmarkGetsTheOptionsItTakesAndRefusesOthers() {
        assertThat(BenchOptions.read(
                        "scale", new String[] {"--sizes", "1000,10000", "--out", "x.json"}, "--sizes", "--out"))
                .containsExactly(Map.entry("--sizes", "1000,10000"), Map.entry("--out", "x.json"));
        assertThat(BenchOptions.read("scale", new String[] {}, "--sizes")).isEmpty();

        assertThatThrownBy(() -> BenchOptions.read("scale", new String[] {"--size", "10"}, "--sizes"))
                .isInstanceOf(CommandLine.UnmatchedArgumentException.class)
                .hasMessageContaining("Unknown options: '--size'");
        assertThatThrownBy(() -> BenchOptions.read("scale", new String[] {"--sizes", "1", "--sizes", "2"}, "--sizes"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("only once");
        assertThatThrownBy(() -> BenchOptions.read("scale", new String[] {"--sizes"}, "--sizes"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("Missing required parameter for option '--sizes'");
        assertThatThrownBy(() -> BenchOptions.read("scale", new String[] {"stray"}, "--sizes"))
                .isInstanceOf(CommandLine.ParameterException.class);
    }
}
