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
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A sentence-transformer run with ONNX Runtime: WordPiece tokenization (HuggingFace tokenizers through DJL), the
 * encoder, attention-masked mean pooling and L2 normalization. The default model, all-MiniLM-L6-v2 (quantized), is
 * read from its Maven artifact on the classpath, so no network is needed.
 */
public final class OnnxEmbedder implements Embedder {

    private static final String MINILM_MODEL = "/all-minilm-l6-v2-q.onnx";
    private static final String MINILM_TOKENIZER = "/all-minilm-l6-v2-q-tokenizer.json";

    private final String modelId;
    private final HuggingFaceTokenizer tokenizer;
    private final OrtEnvironment environment;
    private final OrtSession session;
    private final int dimensions;
    private final boolean needsTokenTypes;

    private OnnxEmbedder(String modelId, byte[] model, InputStream tokenizerJson, int maxTokens, int threads)
            throws IOException, OrtException {
        this.modelId = modelId;
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
            this.session = environment.createSession(model, so);
        }
        this.needsTokenTypes = session.getInputNames().contains("token_type_ids");
        this.dimensions = embed("dimension probe").length;
    }

    /** all-MiniLM-L6-v2, int8-quantized, 384 dimensions, from the classpath. */
    public static OnnxEmbedder allMiniLmL6V2(int maxTokens, int threads) {
        try (InputStream model = resource(MINILM_MODEL);
                InputStream tokenizer = resource(MINILM_TOKENIZER)) {
            return new OnnxEmbedder("all-minilm-l6-v2-q", model.readAllBytes(), tokenizer, maxTokens, threads);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load the embedding model", e);
        } catch (OrtException e) {
            throw new IllegalStateException("cannot start ONNX Runtime for the embedding model", e);
        }
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
        return modelId;
    }

    @Override
    public int dimensions() {
        return dimensions;
    }

    @Override
    public float[] embed(String text) {
        return embedAll(List.of(text)).get(0);
    }

    /**
     * Embeds texts one by one. Batching with padding would be faster for short texts, but the int8 model quantizes
     * activations per batch, so a text's vector would depend on its batch mates (cosine 0.99 instead of 1.0 to its
     * unbatched self); queries are embedded alone, so documents are too.
     */
    @Override
    public List<float[]> embedAll(List<String> texts) {
        List<float[]> out = new ArrayList<>(texts.size());
        for (String text : texts) {
            try {
                out.add(embedOne(text));
            } catch (OrtException e) {
                throw new IllegalStateException("embedding failed: " + e.getMessage(), e);
            }
        }
        return out;
    }

    private float[] embedOne(String text) throws OrtException {
        Encoding encoding = tokenizer.encode(text.isEmpty() ? " " : text);
        long[] ids = encoding.getIds();
        long[] mask = encoding.getAttentionMask();
        long[] shape = {1, ids.length};
        Map<String, OnnxTensor> inputs = new HashMap<>();
        try {
            inputs.put("input_ids", OnnxTensor.createTensor(environment, LongBuffer.wrap(ids), shape));
            inputs.put("attention_mask", OnnxTensor.createTensor(environment, LongBuffer.wrap(mask), shape));
            if (needsTokenTypes) {
                inputs.put(
                        "token_type_ids",
                        OnnxTensor.createTensor(environment, LongBuffer.wrap(encoding.getTypeIds()), shape));
            }
            try (OrtSession.Result result = session.run(inputs)) {
                float[][][] hidden = (float[][][]) result.get(0).getValue();
                return meanPoolNormalized(hidden[0], mask);
            }
        } finally {
            inputs.values().forEach(OnnxTensor::close);
        }
    }

    static float[] meanPoolNormalized(float[][] tokens, long[] mask) {
        int dims = tokens[0].length;
        float[] sum = new float[dims];
        int count = 0;
        for (int t = 0; t < tokens.length; t++) {
            if (mask[t] == 0) {
                continue;
            }
            count++;
            for (int d = 0; d < dims; d++) {
                sum[d] += tokens[t][d];
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
