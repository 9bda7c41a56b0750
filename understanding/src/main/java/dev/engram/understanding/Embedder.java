package dev.engram.understanding;

import java.util.List;

/** Maps text to unit-length vectors; thread-safe. */
public interface Embedder extends AutoCloseable {

    /** Model id, recorded with every vector so that a model change is visible. */
    String modelId();

    int dimensions();

    /**
     * Whether embedding calls a remote service (slow, may fail transiently); the stream then embeds off its threads,
     * outside its transactions.
     */
    default boolean remote() {
        return false;
    }

    float[] embed(String text);

    default List<float[]> embedAll(List<String> texts) {
        return texts.stream().map(this::embed).toList();
    }

    @Override
    void close();
}
