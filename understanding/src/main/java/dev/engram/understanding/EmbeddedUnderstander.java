package dev.engram.understanding;

import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;

/** The offline default: rule-based entities, the passage itself as its memory, and a local ONNX embedder. */
public final class EmbeddedUnderstander implements Understander {

    public static final String EXTRACTOR = "embedded-rules/1";

    private final Embedder embedder;
    private final EntitySpotter spotter = new EntitySpotter();

    public EmbeddedUnderstander(Embedder embedder) {
        this.embedder = embedder;
    }

    @Override
    public String extractor() {
        return EXTRACTOR;
    }

    @Override
    public Embedder embedder() {
        return embedder;
    }

    @Override
    public Understanding understand(PassageEvent.Upsert passage) {
        float[] vector = embedder.embed(Understander.embeddingText(passage));
        return new Understanding(passage.text(), spotter.spot(passage.text()), vector, EXTRACTOR, embedder.modelId());
    }

    @Override
    public void close() {
        embedder.close();
    }
}
