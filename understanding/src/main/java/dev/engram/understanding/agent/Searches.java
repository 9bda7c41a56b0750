package dev.engram.understanding.agent;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the paragraph's searches of memory answered: the entities memory returned, which a reference may name, and
 * the names searched for or found, which a new entity must be among.
 */
final class Searches {

    /** Entities memory returned to a search, by id. */
    private final Map<String, MemoryView.KnownEntity> seen = new LinkedHashMap<>();
    /** Names searched for or found (normalized). */
    private final Set<String> searched = new LinkedHashSet<>();

    /** Notes a search that answered: its query, and the entities it found with their names and aliases. */
    void answered(String query, List<MemoryView.KnownEntity> found) {
        searched.add(Stage.key(query)); // only a search that answered counts
        for (MemoryView.KnownEntity e : found) {
            seen.put(e.id(), e);
            searched.add(Stage.key(e.name()));
            e.aliases().forEach(a -> searched.add(Stage.key(a)));
        }
    }

    /** Whether a search covered the name: it was searched for, or an entity found has it. */
    boolean covers(String name) {
        return searched.contains(Stage.key(name));
    }

    String knownName(String ref) {
        MemoryView.KnownEntity known = known(ref);
        return known == null ? null : known.name();
    }

    /** An entity a search returned, by its id, or by its name when one entity found has that name. */
    MemoryView.KnownEntity known(String ref) {
        MemoryView.KnownEntity byId = seen.get(ref);
        if (byId != null) {
            return byId;
        }
        List<MemoryView.KnownEntity> named = seen.values().stream()
                .filter(e -> Stage.key(e.name()).equals(Stage.key(ref)))
                .toList();
        return named.size() == 1 ? named.get(0) : null;
    }
}
