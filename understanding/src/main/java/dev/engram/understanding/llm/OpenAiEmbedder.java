package dev.engram.understanding.llm;

import dev.engram.understanding.Embedder;
import dev.engram.understanding.VectorMath;
import java.util.ArrayList;
import java.util.List;

/** Embeddings from the API's {@code /embeddings} endpoint, normalized to unit length. */
public final class OpenAiEmbedder implements Embedder {

    private static final int MAX_INPUTS_PER_CALL = 64;

    private final OpenAiClient client;
    private final String model;
    private final int dimensions;

    public OpenAiEmbedder(OpenAiClient client, String model) {
        this.client = client;
        this.model = model;
        this.dimensions = embed("dimension probe").length;
    }

    @Override
    public String modelId() {
        return model;
    }

    @Override
    public int dimensions() {
        return dimensions;
    }

    @Override
    public boolean remote() {
        return true;
    }

    @Override
    public float[] embed(String text) {
        return embedAll(List.of(text)).get(0);
    }

    @Override
    public List<float[]> embedAll(List<String> texts) {
        List<float[]> out = new ArrayList<>(texts.size());
        for (int from = 0; from < texts.size(); from += MAX_INPUTS_PER_CALL) {
            List<String> batch = texts.subList(from, Math.min(texts.size(), from + MAX_INPUTS_PER_CALL));
            List<String> inputs = batch.stream().map(t -> t.isEmpty() ? " " : t).toList();
            for (float[] v : client.embeddings(model, inputs)) {
                out.add(normalize(v));
            }
        }
        return out;
    }

    static float[] normalize(float[] v) {
        return VectorMath.normalize(v.clone());
    }

    @Override
    public void close() {}
}
