package dev.engram.bench;

import dev.engram.understanding.Embedder;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The model for base texts; for a copy's text (one with renamed words), the vector of the base text it was made
 * from plus seeded noise, so that copies are near their original (cosine about 0.95) but never equal to it. That
 * is for the understanding's texts, which it embeds a passage at a time ({@link #embedAll}); the service embeds a
 * query and each of its sub-queries one by one ({@link #embed}), and those are the model's work every time, as a
 * user's query is: were their vectors kept, the first mode to ask a question would pay for the model and every
 * other mode would not.
 */
final class CopyEmbedder implements Embedder {
    private final Embedder model;
    private final CopyNames names;
    private final Map<String, float[]> base = new ConcurrentHashMap<>();

    CopyEmbedder(Embedder model, CopyNames names) {
        this.model = model;
        this.names = names;
    }

    @Override
    public String modelId() {
        return model.modelId();
    }

    @Override
    public int dimensions() {
        return model.dimensions();
    }

    @Override
    public float[] embed(String text) {
        return model.embed(text);
    }

    @Override
    public List<float[]> embedAll(List<String> texts) {
        return texts.stream().map(this::understood).toList();
    }

    private float[] understood(String text) {
        String original = names.original(text);
        float[] known = base.computeIfAbsent(original, model::embed);
        if (original.equals(text)) {
            return known;
        }
        float[] v = known.clone();
        perturb(v, new SplittableRandom(text.hashCode()));
        return v;
    }

    /** {@code v} moved by seeded Gaussian noise (cosine about 0.95 to where it was) and normalized again, in place. */
    static void perturb(float[] v, SplittableRandom noise) {
        double sigma = 0.33 / Math.sqrt(v.length);
        double norm = 0;
        for (int i = 0; i < v.length; i++) {
            v[i] += (float) (sigma * gaussian(noise));
            norm += (double) v[i] * v[i];
        }
        float inv = (float) (1 / Math.sqrt(norm));
        for (int i = 0; i < v.length; i++) {
            v[i] *= inv;
        }
    }

    private static double gaussian(SplittableRandom r) {
        // Box–Muller
        double u = Math.max(1e-12, r.nextDouble());
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
    }

    /**
     * About how much heap the vectors of base texts kept here hold, with their texts: the benchmark's own, which its
     * memory figures set apart from the service's.
     */
    long heapBytes() {
        long bytes = 0;
        for (Map.Entry<String, float[]> e : base.entrySet()) {
            bytes += 32 + 40 + e.getKey().length() + 16 + 4L * e.getValue().length;
        }
        return bytes;
    }

    @Override
    public void close() {
        model.close();
    }
}
