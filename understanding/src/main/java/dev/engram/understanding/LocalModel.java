package dev.engram.understanding;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The sentence-transformer models Engram runs in process, each from its Maven artifact (ONNX exports of the
 * models on the Hugging Face hub: all-MiniLM-L6-v2 is Apache-2.0, bge-small-en-v1.5 is MIT).
 */
public enum LocalModel {
    /** all-MiniLM-L6-v2 with int8 dynamic quantization: the fastest, one text per call. */
    ALL_MINILM_L6_V2_Q("all-minilm-l6-v2-q", Pooling.MEAN, false),
    /** all-MiniLM-L6-v2 in fp32: batches of texts, each text's vector independent of its batch mates. */
    ALL_MINILM_L6_V2("all-minilm-l6-v2", Pooling.MEAN, true),
    /** BAAI bge-small-en-v1.5 in fp32, pooled on its first token. */
    BGE_SMALL_EN_V15("bge-small-en-v1.5", Pooling.CLS, true),
    /** BAAI bge-small-en-v1.5 with int8 dynamic quantization, one text per call: the default. */
    BGE_SMALL_EN_V15_Q("bge-small-en-v1.5-q", Pooling.CLS, false);

    /** How the token vectors become the text's vector. */
    public enum Pooling {
        MEAN,
        CLS
    }

    private final String id;
    private final Pooling pooling;
    private final boolean batchInvariant;

    LocalModel(String id, Pooling pooling, boolean batchInvariant) {
        this.id = id;
        this.pooling = pooling;
        this.batchInvariant = batchInvariant;
    }

    /** The id recorded with every vector, and the value of {@code ENGRAM_EMBEDDER}. */
    public String id() {
        return id;
    }

    public Pooling pooling() {
        return pooling;
    }

    /**
     * Whether a text's vector stays the same in a batch of texts of its length: not for int8 models, which quantize
     * their activations per batch.
     */
    public boolean batchInvariant() {
        return batchInvariant;
    }

    String onnxResource() {
        return "/" + id + ".onnx";
    }

    String tokenizerResource() {
        return "/" + id + "-tokenizer.json";
    }

    /** The model with id {@code id}. */
    public static LocalModel byId(String id) {
        for (LocalModel m : values()) {
            if (m.id.equals(id.toLowerCase(Locale.ROOT))) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown embedding model '" + id + "'; known: " + ids());
    }

    /** The ids of every model, comma-separated. */
    public static String ids() {
        return Arrays.stream(values()).map(LocalModel::id).collect(Collectors.joining(", "));
    }
}
