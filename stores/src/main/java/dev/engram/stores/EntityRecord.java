package dev.engram.stores;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import dev.engram.schemas.EntityType;
import java.util.List;
import java.util.Map;

/**
 * A surface entity of a namespace: every mention whose normalized name and type class are the same. Surfaces are the
 * unit of reference counting; entity resolution groups them into resolved entities, each named by {@code canonical}
 * (the smallest surface id of its group, so it stays stable while that surface exists).
 *
 * <p>Everything here is a function of the surface's current mentions, never of the order they arrived in: {@code
 * name} is the most frequent written form, {@code description} and {@code vector} come from the mention in the
 * smallest passage id ({@code representative}), aliases are counted. The representative's "name: description"
 * embedding lives in its own store (entity reads stay small); {@code lsh} holds its locality-sensitive hashes.
 *
 * @param forms written forms of the name → number of passages using that form
 * @param aliases normalized aliases the extractor declared → number of passages declaring it
 * @param lsh the random-hyperplane hash of the representative's embedding per band; empty without one
 */
public record EntityRecord(
        String namespace,
        String id,
        String name,
        String normalized,
        EntityType type,
        int mentions,
        int passages,

        @JsonSerialize(using = Counts.Serializer.class) @JsonDeserialize(using = Counts.Deserializer.class)
        Map<String, Integer> forms,

        @JsonSerialize(using = Counts.Serializer.class) @JsonDeserialize(using = Counts.Deserializer.class)
        Map<String, Integer> aliases,

        String description,
        String representative,
        List<Integer> lsh,
        String canonical) {

    public EntityRecord {
        forms = forms == null ? Map.of() : Map.copyOf(forms);
        lsh = lsh == null ? List.of() : List.copyOf(lsh);
        aliases = aliases == null ? Map.of() : Map.copyOf(aliases);
        description = description == null ? "" : description;
        canonical = canonical == null ? id : canonical;
    }

    public EntityRecord withCanonical(String newCanonical) {
        return new EntityRecord(
                namespace,
                id,
                name,
                normalized,
                type,
                mentions,
                passages,
                forms,
                aliases,
                description,
                representative,
                lsh,
                newCanonical);
    }

    /** The same surface with another representative mention (its description and embedding hashes). */
    public EntityRecord withRepresentative(String passageId, String newDescription, List<Integer> newLsh) {
        return new EntityRecord(
                namespace,
                id,
                name,
                normalized,
                type,
                mentions,
                passages,
                forms,
                aliases,
                newDescription,
                passageId,
                newLsh,
                canonical);
    }

    /** True when entity resolution grouped this surface under another one. */
    public boolean merged() {
        return !canonical.equals(id);
    }
}
