package dev.engram.understanding;

import dev.engram.schemas.EntityType;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The mentions of one entity. */
final class EntityGroup {

    final String name;
    final List<Mention> mentions = new ArrayList<>();
    final Set<String> aliases = new LinkedHashSet<>();
    EntityType type = EntityType.OTHER;
    String description = "";

    EntityGroup(String name) {
        this.name = name;
    }
}
