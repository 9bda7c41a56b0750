package dev.engram.stores;

import dev.engram.schemas.EntityType;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The forms under which entity names are keyed in the stores: the normalized form (case, diacritics, punctuation,
 * leading article) that makes a surface entity, the surface id, and the loose form the blocking index files names
 * under. Writers and readers key names only through these, so both sides always agree.
 */
public final class EntityNames {

    private static final Pattern MARKS = Pattern.compile("\\p{M}+");
    private static final Pattern NON_WORD = Pattern.compile("[^\\p{L}\\p{N}]+");
    private static final Pattern ARTICLE = Pattern.compile("^(the|a|an) ");

    private static final Set<String> CORPORATE = Set.of(
            "inc",
            "incorporated",
            "ltd",
            "limited",
            "corp",
            "corporation",
            "co",
            "company",
            "llc",
            "plc",
            "gmbh",
            "ag",
            "sa",
            "group");

    private EntityNames() {}

    /**
     * The id of the surface entity a mention belongs to: mentions with the same namespace, normalized name and type
     * class are one surface entity; entity resolution then groups surfaces into resolved entities.
     */
    public static String surfaceId(String ns, String name, EntityType type) {
        return Hashing.id(ns, normalize(name), typeClass(type).wireName());
    }

    public static String normalize(String name) {
        String s = Normalizer.normalize(name, Normalizer.Form.NFKD);
        s = MARKS.matcher(s).replaceAll("");
        s = NON_WORD.matcher(s.toLowerCase(Locale.ROOT)).replaceAll(" ").strip();
        String without = ARTICLE.matcher(s).replaceFirst("");
        return without.isEmpty() ? s : without;
    }

    /** The type classes that may hold the same referent: unknown ({@code OTHER}) goes with any. */
    public static EntityType typeClass(EntityType type) {
        return type == null ? EntityType.OTHER : type;
    }

    /** The tokens of a normalized name. */
    public static List<String> tokens(String normalized) {
        return normalized.isEmpty() ? List.of() : List.of(normalized.split(" "));
    }

    /** Corporate suffixes dropped, saint/mount/fort spelled out, spaces removed. */
    public static String loose(String normalized) {
        List<String> kept = new ArrayList<>();
        List<String> tokens = tokens(normalized);
        for (int i = 0; i < tokens.size(); i++) {
            String t = tokens.get(i);
            if (i > 0 && CORPORATE.contains(t)) {
                continue;
            }
            kept.add(
                    switch (t) {
                        case "st" -> "saint";
                        case "mt" -> "mount";
                        case "ft" -> "fort";
                        default -> t;
                    });
        }
        if (kept.isEmpty()) {
            kept = tokens;
        }
        return String.join("", kept);
    }
}
