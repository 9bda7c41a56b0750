package dev.engram.stores;

import dev.engram.schemas.EntityType;
import java.util.Map;

/**
 * A surface entity of a namespace: every mention whose normalized name and type class are the same. Surfaces are the
 * unit of reference counting; entity resolution groups them into resolved entities, each named by {@code canonical}
 * (the smallest surface id of its group, so it stays stable while that surface exists).
 *
 * <p>Everything here is a function of the surface's current mentions, never of the order they arrived in: {@code
 * name} is the most frequent written form, {@code description} and {@code vector} come from the mention in the
 * smallest passage id that has one ({@code representative}), aliases are counted.
 *
 * @param forms written forms of the name → number of passages using that form
 * @param aliases normalized aliases the extractor declared → number of passages declaring it
 * @param vector the "name: description" embedding of the representative mention, little-endian float32, or null
 */
public record EntityRecord(
        String namespace,
        String id,
        String name,
        String normalized,
        EntityType type,
        int mentions,
        int passages,
        Map<String, Integer> forms,
        Map<String, Integer> aliases,
        String description,
        String representative,
        byte[] vector,
        String canonical) {

    public EntityRecord {
        forms = forms == null ? Map.of() : Map.copyOf(forms);
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
                vector,
                newCanonical);
    }

    /** The same surface with another representative mention (its description and vector). */
    public EntityRecord withRepresentative(String passageId, String newDescription, byte[] newVector) {
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
                newVector,
                canonical);
    }

    /** True when entity resolution grouped this surface under another one. */
    public boolean merged() {
        return !canonical.equals(id);
    }
}
