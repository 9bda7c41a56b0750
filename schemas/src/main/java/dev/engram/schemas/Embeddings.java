package dev.engram.schemas;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import java.util.List;

/**
 * The vectors of one understanding, aligned by index with the extraction's lists. Each vector is unit length and
 * travels as base64 of little-endian float32. A utility question's vector is the normalized mean of the question's
 * and the passage's embeddings (GEM-RAG).
 */
public record Embeddings(
        @JsonSerialize(using = VectorCodec.Serializer.class) @JsonDeserialize(using = VectorCodec.Deserializer.class)
        float[] passage,

        @JsonSerialize(using = VectorCodec.Serializer.class) @JsonDeserialize(using = VectorCodec.Deserializer.class)
        float[] memory,

        @JsonSerialize(contentUsing = VectorCodec.Serializer.class)
        @JsonDeserialize(contentUsing = VectorCodec.Deserializer.class)
        List<float[]> entities,

        @JsonSerialize(contentUsing = VectorCodec.Serializer.class)
        @JsonDeserialize(contentUsing = VectorCodec.Deserializer.class)
        List<float[]> facts,

        @JsonSerialize(contentUsing = VectorCodec.Serializer.class)
        @JsonDeserialize(contentUsing = VectorCodec.Deserializer.class)
        List<float[]> questions) {

    public Embeddings {
        entities = entities == null ? List.of() : List.copyOf(entities);
        facts = facts == null ? List.of() : List.copyOf(facts);
        questions = questions == null ? List.of() : List.copyOf(questions);
    }
}
