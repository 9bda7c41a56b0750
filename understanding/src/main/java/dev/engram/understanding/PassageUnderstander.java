package dev.engram.understanding;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import java.util.ArrayList;
import java.util.List;

/**
 * An extractor and an embedder. All texts of a passage are embedded in one batched call: the passage (with its title
 * and headings), the memory (unless it equals the passage text), each entity's "name: description", each fact's
 * "head relation tail", and each utility question, whose vector is the normalized mean of its own and the passage's
 * (GEM-RAG §III.B).
 */
public final class PassageUnderstander implements Understander {

    private final Extractor extractor;
    private final Embedder embedder;
    private final boolean ownsEmbedder;

    public PassageUnderstander(Extractor extractor, Embedder embedder, boolean ownsEmbedder) {
        this.extractor = extractor;
        this.embedder = embedder;
        this.ownsEmbedder = ownsEmbedder;
    }

    @Override
    public Extractor extractor() {
        return extractor;
    }

    @Override
    public Embedder embedder() {
        return embedder;
    }

    @Override
    public Understanding embed(PassageEvent.Upsert passage, Extraction extraction) {
        List<String> texts = new ArrayList<>();
        texts.add(Understander.embeddingText(passage));
        boolean separateMemory = !extraction.memory().equals(passage.text())
                && !extraction.memory().isBlank();
        if (separateMemory) {
            texts.add(extraction.memory());
        }
        int entitiesAt = texts.size();
        extraction.entities().forEach(e -> texts.add(e.embeddingText()));
        int factsAt = texts.size();
        extraction.facts().forEach(f -> texts.add(f.text()));
        int questionsAt = texts.size();
        texts.addAll(extraction.questions());

        List<float[]> vectors = embedder.embedAll(texts);
        float[] passageVector = vectors.get(0);
        float[] memoryVector = separateMemory ? vectors.get(1) : passageVector;
        List<float[]> questions = new ArrayList<>();
        for (int i = questionsAt; i < vectors.size(); i++) {
            questions.add(meanNormalized(vectors.get(i), passageVector));
        }
        return new Understanding(
                extraction,
                new Embeddings(
                        passageVector,
                        memoryVector,
                        vectors.subList(entitiesAt, factsAt),
                        vectors.subList(factsAt, questionsAt),
                        questions),
                embedder.modelId());
    }

    static float[] meanNormalized(float[] a, float[] b) {
        float[] out = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = (a[i] + b[i]) / 2;
        }
        return VectorMath.normalize(out);
    }

    @Override
    public void close() {
        if (ownsEmbedder) {
            embedder.close();
        }
    }
}
