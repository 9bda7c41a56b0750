package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Runs the real ONNX models from their Maven artifacts. */
class OnnxEmbedderTest {

    private static OnnxEmbedder embedder;

    @BeforeAll
    static void load() {
        embedder = OnnxEmbedder.allMiniLmL6V2(256, 1);
    }

    @AfterAll
    static void close() {
        embedder.close();
    }

    private static double cosine(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    @Test
    void producesUnitVectorsOf384Dimensions() {
        float[] v = embedder.embed("Kafka Streams keeps state in RocksDB.");

        assertThat(embedder.dimensions()).isEqualTo(384);
        assertThat(v).hasSize(384);
        assertThat(cosine(v, v)).isCloseTo(1.0, within(1e-4));
    }

    @Test
    void placesParaphrasesCloserThanUnrelatedText() {
        float[] a = embedder.embed("Who wrote the first computer program?");
        float[] b = embedder.embed("Ada Lovelace published the first algorithm intended for a machine.");
        float[] c = embedder.embed("The recipe needs two cups of flour and an egg.");

        assertThat(cosine(a, b)).isGreaterThan(cosine(a, c) + 0.1);
    }

    @Test
    void isDeterministicAndTruncatesLongInput() {
        String text = "memory ".repeat(2000);

        assertThat(embedder.embed(text)).containsExactly(embedder.embed(text));
        assertThat(embedder.embed("")).hasSize(384);
    }

    @Test
    void aTextHasTheSameVectorWhateverItIsEmbeddedWith() {
        List<String> texts = List.of(
                "Ada Lovelace",
                "Charles Babbage designed the Analytical Engine in 1837.",
                "",
                "Who wrote Note G?",
                "memory ".repeat(400));

        List<float[]> batched = embedder.embedAll(texts);

        assertThat(batched).hasSize(texts.size());
        for (int i = 0; i < texts.size(); i++) {
            assertThat(batched.get(i)).as(texts.get(i)).containsExactly(embedder.embed(texts.get(i)));
        }
    }

    /**
     * Every shipped model loads from its artifact, gives unit vectors, and gives a text the vector it has alone in
     * whatever call it is embedded: the fp32 models embed texts of equal length in one batch (the two-word texts
     * below), the int8 ones one at a time.
     */
    @ParameterizedTest
    @EnumSource(LocalModel.class)
    void everyModelEmbedsATextAsItWouldAlone(LocalModel model) {
        List<String> texts =
                List.of("red car", "blue sky", "green tree", "Who designed the Analytical Engine?", "", "red car");
        try (OnnxEmbedder e = OnnxEmbedder.load(model, 128, 1)) {
            assertThat(e.modelId()).isEqualTo(model.id());
            assertThat(e.dimensions()).isEqualTo(384);

            long before = e.runs();
            List<float[]> together = e.embedAll(texts);
            long runs = e.runs() - before;

            for (int i = 0; i < texts.size(); i++) {
                float[] alone = e.embed(texts.get(i));
                assertThat(cosine(alone, alone)).isCloseTo(1.0, within(1e-4));
                assertThat(together.get(i)).as("%s: %s", model, texts.get(i)).containsExactly(alone);
            }
            assertThat(cosine(together.get(0), together.get(1))).isLessThan(0.999);
            if (model.batchInvariant()) {
                assertThat(runs).as("calls for %d texts", texts.size()).isLessThan(texts.size());
            } else {
                assertThat(runs).isEqualTo(texts.size());
            }
        }
    }

    /**
     * ONNX Runtime's start needs about a megabyte of stack, and a native stack overflow ends the JVM with no error
     * file. A new JVM, so that the native libraries start in it, loads a model with every thread's stack at 256 KiB.
     */
    @Test
    void loadsOnAThreadWithASmallStack(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("child.log");
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xss256k",
                        "-Xmx256m",
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        SmallStackLoad.class.getName())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        boolean ended = child.waitFor(2, TimeUnit.MINUTES);
        if (!ended) {
            child.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(ended).as(output).isTrue();
        assertThat(child.exitValue()).as(output).isZero();
        assertThat(output).contains("dimensions 384");
    }

    /** The child JVM of {@link #loadsOnAThreadWithASmallStack}. */
    static final class SmallStackLoad {
        public static void main(String[] args) {
            try (OnnxEmbedder e = OnnxEmbedder.load(LocalModel.BGE_SMALL_EN_V15_Q, 256, 1)) {
                System.out.println("dimensions " + e.embed("a text embedded on a small stack").length);
            }
        }
    }

    @Test
    void modelsAreFoundByTheirIds() {
        assertThat(LocalModel.byId("bge-small-en-v1.5-q")).isEqualTo(LocalModel.BGE_SMALL_EN_V15_Q);
        assertThat(LocalModel.byId("ALL-MINILM-L6-V2-Q")).isEqualTo(LocalModel.ALL_MINILM_L6_V2_Q);
        assertThatThrownBy(() -> LocalModel.byId("gpt-embed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("all-minilm-l6-v2-q");
    }

    @Test
    void meanPoolingIgnoresMaskedTokens() {
        // two rows of three tokens of two values, flat as the model gives them; the second row's last token is masked
        FloatBuffer hidden = FloatBuffer.wrap(new float[] {9, 9, 9, 9, 9, 9, 1, 0, 0, 1, 100, 100});
        long[] mask = {1, 1, 1, 1, 1, 0};

        float[] v = OnnxEmbedder.meanPoolNormalized(hidden, 6, 3, 2, mask, 3);

        assertThat(v[0]).isCloseTo((float) Math.sqrt(0.5), within(1e-6f));
        assertThat(v[1]).isCloseTo((float) Math.sqrt(0.5), within(1e-6f));
    }
}
