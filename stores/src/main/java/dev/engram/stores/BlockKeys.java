package dev.engram.stores;

/**
 * The blocking-index keys of {@link StateStores#MEMORY_ENTITY_INDEX}: a surface entity is filed under each key its name
 * forms give, and candidates for a new surface are the other surfaces filed under its keys.
 */
public final class BlockKeys {

    private BlockKeys() {}

    /** Under its loose form (see {@link EntityNames#loose}). */
    public static String loose(String looseForm) {
        return "l:" + looseForm;
    }

    /** Under its own normalized name and each declared alias. */
    public static String name(String normalized) {
        return "a:" + normalized;
    }

    /** Under its acronym or initials. */
    public static String shortForm(String letters) {
        return "x:" + letters;
    }

    /** Under each name token worth blocking on. */
    public static String token(String token) {
        return "t:" + token;
    }

    /** Under the bucket of its "name: description" embedding in one LSH band. */
    public static String embedding(int band, int bucket) {
        return "v" + band + ":" + bucket;
    }

    /** True for embedding buckets, which never make a name ambiguous. */
    public static boolean isEmbedding(String key) {
        return key.startsWith("v");
    }
}
