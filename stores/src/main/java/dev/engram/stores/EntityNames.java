package dev.engram.stores;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.NormalizedNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The forms under which entity names are keyed in the stores: the normalized form (case, diacritics, punctuation,
 * leading article) that makes a surface entity, the surface id, and the loose form the blocking index files names
 * under. Writers and readers key names only through these, so both sides always agree.
 */
public final class EntityNames {

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
     * The id of the surface entity a mention without description belongs to: mentions with the same namespace,
     * normalized name and type class are one surface entity; entity resolution then groups surfaces into resolved
     * entities.
     */
    public static String surfaceId(String ns, String name, EntityType type) {
        return surfaceId(ns, name, type, "");
    }

    /**
     * The id of the surface entity a mention with this description belongs to: mentions of one name and type whose
     * descriptions have another {@link DescriptionSense} are different surfaces, so that namesakes the descriptions
     * tell apart are never one surface; resolution decides whether two senses are one referent.
     */
    public static String surfaceId(String ns, String name, EntityType type, String description) {
        String sense = DescriptionSense.of(description).key();
        return sense.isEmpty()
                ? Hashing.id(ns, normalize(name), typeClass(type).wireName())
                : Hashing.id(ns, normalize(name), typeClass(type).wireName(), sense);
    }

    /**
     * The surface id of each of a passage's extracted mentions, by index (null for a name that normalizes to nothing):
     * mentions of one name and type within a passage are one surface, described by the first description any of them
     * has, so a passage never splits its own mentions of a name. Writers and readers of a passage's entities both key
     * them through this.
     */
    public static List<String> surfaceIds(String ns, List<Extraction.Entity> mentions) {
        List<String> bare = new ArrayList<>(mentions.size());
        Map<String, String> descriptions = new HashMap<>();
        for (Extraction.Entity m : mentions) {
            String id = normalize(m.name()).isEmpty() ? null : surfaceId(ns, m.name(), m.type());
            bare.add(id);
            if (id != null && !m.description().isBlank()) {
                descriptions.putIfAbsent(id, m.description());
            }
        }
        List<String> out = new ArrayList<>(mentions.size());
        for (int i = 0; i < mentions.size(); i++) {
            Extraction.Entity m = mentions.get(i);
            String description = bare.get(i) == null ? null : descriptions.get(bare.get(i));
            out.add(description == null ? bare.get(i) : surfaceId(ns, m.name(), m.type(), description));
        }
        return out;
    }

    /** The normalized form of a name ({@link NormalizedNames#of}): what makes a surface entity. */
    public static String normalize(String name) {
        return NormalizedNames.of(name);
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
