package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the real all-MiniLM-L6-v2 ONNX model from its Maven artifact. */
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

    @Test
    void meanPoolingIgnoresMaskedTokens() {
        float[][] tokens = {{1, 0}, {0, 1}, {100, 100}};

        float[] v = OnnxEmbedder.meanPoolNormalized(tokens, new long[] {1, 1, 0});

        assertThat(v[0]).isCloseTo((float) Math.sqrt(0.5), within(1e-6f));
        assertThat(v[1]).isCloseTo((float) Math.sqrt(0.5), within(1e-6f));
    }
}
