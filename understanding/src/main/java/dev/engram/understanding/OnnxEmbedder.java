package dev.engram.understanding;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A sentence-transformer run with ONNX Runtime: WordPiece tokenization (HuggingFace tokenizers through DJL), the
 * encoder, pooling (attention-masked mean or the first token, as the model was trained) and L2 normalization. The
 * models are read from their Maven artifacts on the classpath, so no network is needed.
 */
public final class OnnxEmbedder implements Embedder {

    /** The stack of the thread that loads a model: generous, as native code of unknown depth runs on it. */
    static final long LOAD_STACK_BYTES = 16L << 20;

    /** How many texts go into one call at most when the model allows batches. */
    static final int MAX_BATCH = 64;

    private final LocalModel model;
    private final HuggingFaceTokenizer tokenizer;
    private final OrtEnvironment environment;
    private final OrtSession session;
    private final int dimensions;
    private final boolean needsTokenTypes;
    private final AtomicLong runs = new AtomicLong();

    private OnnxEmbedder(LocalModel model, byte[] onnx, InputStream tokenizerJson, int maxTokens, int threads)
            throws IOException, OrtException {
        this.model = model;
        Map<String, String> options = new HashMap<>();
        options.put("maxLength", Integer.toString(maxTokens));
        options.put("truncation", "true");
        options.put("padding", "false");
        this.tokenizer = HuggingFaceTokenizer.newInstance(tokenizerJson, options);
        this.environment = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions so = new OrtSession.SessionOptions()) {
            so.setIntraOpNumThreads(threads);
            so.setInterOpNumThreads(1);
            so.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            this.session = environment.createSession(onnx, so);
        }
        this.needsTokenTypes = session.getInputNames().contains("token_type_ids");
        this.dimensions = embed("dimension probe").length;
    }

    /**
     * The model {@code model}, from the classpath.
     *
     * <p>The native libraries are loaded and the model is read on a thread of its own with a {@link #LOAD_STACK_BYTES}
     * stack: ONNX Runtime's start needs about a megabyte of stack, the JVM's default for a thread, and a native stack
     * overflow ends the JVM without a word. Embedding afterwards runs on any thread.
     */
    public static OnnxEmbedder load(LocalModel model, int maxTokens, int threads) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread loader = new Thread(
                null,
                () -> {
                    try {
                        outcome.set(loadHere(model, maxTokens, threads));
                    } catch (Throwable e) { // native code may throw what Java does not declare: all go to the caller
                        outcome.set(e);
                    }
                },
                "engram-embedder-load",
                LOAD_STACK_BYTES);
        loader.start();
        boolean interrupted = false;
        while (true) {
            try {
                loader.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return switch (outcome.get()) {
            case OnnxEmbedder embedder -> embedder;
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            case Throwable e -> throw new IllegalStateException("cannot load the embedding model " + model.id(), e);
            case null, default ->
                throw new IllegalStateException("the embedding model " + model.id() + " did not load");
        };
    }

    private static OnnxEmbedder loadHere(LocalModel model, int maxTokens, int threads) {
        try (InputStream onnx = resource(model.onnxResource());
                InputStream tokenizer = resource(model.tokenizerResource())) {
            return new OnnxEmbedder(model, onnx.readAllBytes(), tokenizer, maxTokens, threads);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load the embedding model " + model.id(), e);
        } catch (OrtException e) {
            throw new IllegalStateException("cannot start ONNX Runtime for the embedding model " + model.id(), e);
        }
    }

    /** all-MiniLM-L6-v2, int8-quantized, 384 dimensions, from the classpath. */
    public static OnnxEmbedder allMiniLmL6V2(int maxTokens, int threads) {
        return load(LocalModel.ALL_MINILM_L6_V2_Q, maxTokens, threads);
    }

    private static InputStream resource(String name) throws IOException {
        InputStream in = OnnxEmbedder.class.getResourceAsStream(name);
        if (in == null) {
            throw new IOException("model resource " + name + " is not on the classpath");
        }
        return in;
    }

    @Override
    public String modelId() {
        return model.id();
    }

    @Override
    public int dimensions() {
        return dimensions;
    }

    /** The model this embedder runs. */
    public LocalModel model() {
        return model;
    }

    @Override
    public float[] embed(String text) {
        return embedAll(List.of(text)).get(0);
    }

    /**
     * Embeds texts, in batches of texts with the same number of tokens where the model allows batches. Same-length
     * batches need no padding, so a text's vector is the one it has alone, whatever it is batched with; an int8 model
     * quantizes its activations per batch, so it embeds one text per call.
     */
    @Override
    public List<float[]> embedAll(List<String> texts) {
        float[][] out = new float[texts.size()][];
        Encoding[] encodings = new Encoding[texts.size()];
        for (int i = 0; i < texts.size(); i++) {
            String text = texts.get(i);
            encodings[i] = tokenizer.encode(text.isEmpty() ? " " : text);
        }
        try {
            if (!model.batchInvariant()) {
                for (int i = 0; i < encodings.length; i++) {
                    out[i] = run(new int[] {i}, encodings)[0];
                }
                return Arrays.asList(out);
            }
            Map<Integer, List<Integer>> byLength = new HashMap<>();
            for (int i = 0; i < encodings.length; i++) {
                byLength.computeIfAbsent(encodings[i].getIds().length, n -> new ArrayList<>())
                        .add(i);
            }
            for (List<Integer> group : byLength.values()) {
                for (int from = 0; from < group.size(); from += MAX_BATCH) {
                    int[] batch = group.subList(from, Math.min(group.size(), from + MAX_BATCH)).stream()
                            .mapToInt(Integer::intValue)
                            .toArray();
                    float[][] vectors = run(batch, encodings);
                    for (int j = 0; j < batch.length; j++) {
                        out[batch[j]] = vectors[j];
                    }
                }
            }
            return Arrays.asList(out);
        } catch (OrtException e) {
            throw new IllegalStateException("embedding failed: " + e.getMessage(), e);
        }
    }

    /** How many times the model ran so far. */
    long runs() {
        return runs.get();
    }

    /** Runs the texts at {@code rows} of {@code encodings}, padded to the longest. */
    private float[][] run(int[] rows, Encoding[] encodings) throws OrtException {
        runs.incrementAndGet();
        int length = 0;
        for (int r : rows) {
            length = Math.max(length, encodings[r].getIds().length);
        }
        long[] ids = new long[rows.length * length];
        long[] mask = new long[ids.length];
        long[] types = new long[ids.length];
        for (int r = 0; r < rows.length; r++) {
            Encoding e = encodings[rows[r]];
            int n = e.getIds().length;
            System.arraycopy(e.getIds(), 0, ids, r * length, n);
            System.arraycopy(e.getAttentionMask(), 0, mask, r * length, n);
            System.arraycopy(e.getTypeIds(), 0, types, r * length, n);
        }
        long[] shape = {rows.length, length};
        Map<String, OnnxTensor> inputs = new HashMap<>();
        try {
            inputs.put("input_ids", OnnxTensor.createTensor(environment, LongBuffer.wrap(ids), shape));
            inputs.put("attention_mask", OnnxTensor.createTensor(environment, LongBuffer.wrap(mask), shape));
            if (needsTokenTypes) {
                inputs.put("token_type_ids", OnnxTensor.createTensor(environment, LongBuffer.wrap(types), shape));
            }
            try (OrtSession.Result result = session.run(inputs)) {
                // the last hidden state, [rows, length, dims], read flat: one copy instead of an array per token
                FloatBuffer hidden = ((OnnxTensor) result.get(0)).getFloatBuffer();
                int dims = hidden.capacity() / (rows.length * length);
                float[][] vectors = new float[rows.length][];
                for (int r = 0; r < rows.length; r++) {
                    int at = r * length * dims;
                    if (model.pooling() == LocalModel.Pooling.CLS) {
                        float[] first = new float[dims];
                        hidden.get(at, first);
                        vectors[r] = VectorMath.normalize(first);
                    } else {
                        vectors[r] = meanPoolNormalized(hidden, at, length, dims, mask, r * length);
                    }
                }
                return vectors;
            }
        } finally {
            inputs.values().forEach(OnnxTensor::close);
        }
    }

    /**
     * The mean of the {@code length} token vectors of {@code dims} values at {@code at} in {@code hidden} whose
     * attention mask (at {@code maskAt} in {@code mask}) is set, normalized.
     */
    static float[] meanPoolNormalized(FloatBuffer hidden, int at, int length, int dims, long[] mask, int maskAt) {
        float[] sum = new float[dims];
        int count = 0;
        for (int t = 0; t < length; t++) {
            if (mask[maskAt + t] == 0) {
                continue;
            }
            count++;
            int token = at + t * dims;
            for (int d = 0; d < dims; d++) {
                sum[d] += hidden.get(token + d);
            }
        }
        for (int d = 0; d < dims; d++) {
            sum[d] /= Math.max(1, count);
        }
        return VectorMath.normalize(sum);
    }

    @Override
    public void close() {
        try {
            session.close();
        } catch (OrtException e) {
            throw new IllegalStateException("cannot close the ONNX session", e);
        } finally {
            tokenizer.close();
        }
    }
}
