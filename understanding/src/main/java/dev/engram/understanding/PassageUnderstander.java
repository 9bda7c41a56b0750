package dev.engram.understanding;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An extractor and an embedder. All texts of a passage are embedded in one batched call: the passage (with its title
 * and headings), the memory (unless it equals the passage text, or memory vectors are off), each entity's "name:
 * description", each fact's "head relation tail", and each utility question, whose vector is the normalized mean of its
 * own and the passage's (GEM-RAG §III.B).
 *
 * <p>The memory vector is read by no retrieval mode: only a vector mirror keeps it (its {@code memory} collection).
 * With memory vectors off it is not embedded, and the passage's understanding carries an empty memory vector.
 */
public final class PassageUnderstander implements Understander {

    /** How many entity and fact texts keep their vectors by default (about 1.6 KB each with 384 dimensions). */
    public static final int SEEN_TEXTS = 20_000;

    private final Extractor extractor;
    private final Embedder embedder;
    private final boolean ownsEmbedder;
    private final boolean memoryVectors;
    /**
     * Vectors of entity and fact texts seen before, by namespace and text, least recently used first: an entity's
     * "name: description" recurs across a namespace's passages. Per namespace, so that how fast a passage is understood
     * tells a tenant nothing of another's texts. A vector is the one the embedder gives the text alone, so a reused
     * one is the same as a new one.
     */
    private final Map<String, float[]> seen;

    private final AtomicLong reused = new AtomicLong();
    private final AtomicLong embedded = new AtomicLong();

    public PassageUnderstander(Extractor extractor, Embedder embedder, boolean ownsEmbedder) {
        this(extractor, embedder, ownsEmbedder, SEEN_TEXTS);
    }

    /**
     * @param seenTexts how many entity and fact texts keep their vectors for reuse (0: none)
     */
    public PassageUnderstander(Extractor extractor, Embedder embedder, boolean ownsEmbedder, int seenTexts) {
        this(extractor, embedder, ownsEmbedder, seenTexts, true);
    }

    /**
     * @param seenTexts how many entity and fact texts keep their vectors for reuse (0: none)
     * @param memoryVectors whether a memory that differs from its passage text is embedded (else its vector is empty)
     */
    public PassageUnderstander(
            Extractor extractor, Embedder embedder, boolean ownsEmbedder, int seenTexts, boolean memoryVectors) {
        if (seenTexts < 0) {
            throw new IllegalArgumentException("seenTexts must not be negative");
        }
        this.extractor = extractor;
        this.embedder = embedder;
        this.ownsEmbedder = ownsEmbedder;
        this.memoryVectors = memoryVectors;
        this.seen = seenTexts == 0
                ? null
                : Collections.synchronizedMap(new LinkedHashMap<>(1024, 0.75f, true) {
                    private static final long serialVersionUID = 1L;

                    @Override
                    protected boolean removeEldestEntry(Map.Entry<String, float[]> eldest) {
                        return size() > seenTexts;
                    }
                });
    }

    /** How many texts had their vector reused so far. */
    public long reused() {
        return reused.get();
    }

    /** How many texts the embedder embedded so far. */
    public long embedded() {
        return embedded.get();
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
    public Map<TextKind, List<String>> textsToEmbed(PassageEvent.Upsert passage, Extraction extraction) {
        Map<TextKind, List<String>> texts = Understander.super.textsToEmbed(passage, extraction);
        if (!memoryVectors) {
            texts.put(TextKind.MEMORY, List.of());
        }
        return texts;
    }

    @Override
    public Understanding embed(PassageEvent.Upsert passage, Extraction extraction) {
        Map<TextKind, List<String>> byKind = textsToEmbed(passage, extraction);
        List<String> texts = new ArrayList<>();
        Map<TextKind, Integer> at = new EnumMap<>(TextKind.class);
        for (Map.Entry<TextKind, List<String>> kind : byKind.entrySet()) {
            at.put(kind.getKey(), texts.size());
            texts.addAll(kind.getValue());
        }
        int entitiesAt = at.get(TextKind.ENTITY);
        int factsAt = at.get(TextKind.FACT);
        int questionsAt = at.get(TextKind.QUESTION);

        List<float[]> vectors = embedAll(passage.namespace(), texts, entitiesAt, questionsAt);
        float[] passageVector = vectors.get(0);
        float[] memoryVector;
        if (!byKind.get(TextKind.MEMORY).isEmpty()) {
            memoryVector = vectors.get(at.get(TextKind.MEMORY));
        } else {
            memoryVector = memoryVectors ? passageVector : new float[0];
        }
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

    /** Embeds {@code texts}, reusing the vectors of the entity and fact texts in {@code [from, to)} seen before. */
    private List<float[]> embedAll(String namespace, List<String> texts, int from, int to) {
        if (seen == null || from == to) {
            embedded.addAndGet(texts.size());
            return embedder.embedAll(texts);
        }
        float[][] out = new float[texts.size()][];
        List<String> missing = new ArrayList<>();
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) {
            float[] known = i >= from && i < to ? seen.get(key(namespace, texts.get(i))) : null;
            if (known != null) {
                out[i] = known.clone();
            } else {
                missing.add(texts.get(i));
                at.add(i);
            }
        }
        embedded.addAndGet(missing.size());
        List<float[]> fresh = embedder.embedAll(missing);
        for (int j = 0; j < fresh.size(); j++) {
            int i = at.get(j);
            out[i] = fresh.get(j);
            if (i >= from && i < to) {
                seen.put(key(namespace, texts.get(i)), fresh.get(j).clone());
            }
        }
        reused.addAndGet(texts.size() - missing.size());
        return Arrays.asList(out);
    }

    private static String key(String namespace, String text) {
        return namespace + '\u0000' + text;
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
