package dev.engram.understanding;

import java.util.List;

/** Maps text to unit-length vectors; thread-safe. */
public interface Embedder extends AutoCloseable {

    /** Model id, recorded with every vector so that a model change is visible. */
    String modelId();

    int dimensions();

    float[] embed(String text);

    default List<float[]> embedAll(List<String> texts) {
        return texts.stream().map(this::embed).toList();
    }

    @Override
    void close();
}
