package dev.engram.understanding.agent;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.Span;
import dev.engram.understanding.TextSpans;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The entities one paragraph has staged, in the order they were staged: found by ref, by a name or alias, or by the
 * memory entity they mention; a mention of a memory entity made for the paragraph; and where each is named in the
 * paragraph.
 */
final class StagedEntities {

    private final String text;
    private final Map<String, Stage.Entity> entities = new LinkedHashMap<>();
    private int nextEntity = 1;

    /** The entities of a paragraph of {@code text}, none staged yet. */
    StagedEntities(String text) {
        this.text = text;
    }

    /** The ref the next entity gets. */
    String nextRef() {
        return "e" + nextEntity++;
    }

    Stage.Entity get(String ref) {
        return entities.get(ref);
    }

    Collection<Stage.Entity> values() {
        return entities.values();
    }

    boolean isEmpty() {
        return entities.isEmpty();
    }

    void put(Stage.Entity e) {
        entities.put(e.ref, e);
    }

    void putIfAbsent(Stage.Entity e) {
        entities.putIfAbsent(e.ref, e);
    }

    void remove(String ref) {
        entities.remove(ref);
    }

    Stage.Entity byName(String name) {
        String k = Stage.key(name);
        for (Stage.Entity e : entities.values()) {
            if (Stage.key(e.name).equals(k)
                    || e.aliases.stream().anyMatch(a -> Stage.key(a).equals(k))) {
                return e;
            }
        }
        return null;
    }

    Stage.Entity attachedTo(String memoryId) {
        for (Stage.Entity e : entities.values()) {
            if (memoryId.equals(e.memoryId)) {
                return e;
            }
        }
        return null;
    }

    /** The entity that mentions {@code known} in this paragraph: the staged one of its name, or a new one, unstaged. */
    Stage.Entity mention(MemoryView.KnownEntity known) {
        Stage.Entity same = byName(known.name());
        if (same != null) {
            // one entity per name in a paragraph: the staged one becomes the mention of memory's
            if (same.memoryId == null) {
                same.memoryId = known.id();
                if (same.description.isEmpty()) {
                    same.description = known.description();
                }
            }
            return same;
        }
        Stage.Entity e =
                new Stage.Entity(nextRef(), known.name(), Stage.type(known.type()), known.description(), known.id());
        for (String a : known.aliases()) {
            if (!TextSpans.occurrences(text, a).isEmpty()) {
                addAlias(e, a);
            }
        }
        return e;
    }

    static void addAlias(Stage.Entity e, String alias) {
        String a = alias.strip();
        if (!a.isEmpty()
                && !Stage.key(a).equals(Stage.key(e.name))
                && e.aliases.stream().noneMatch(x -> Stage.key(x).equals(Stage.key(a)))) {
            e.aliases.add(a);
        }
    }

    /** Where the paragraph names the entity, by its name or an alias. */
    List<Span> spans(Stage.Entity e) {
        return spans(e.name, List.copyOf(e.aliases));
    }

    private List<Span> spans(String name, List<String> aliases) {
        List<Span> all = new ArrayList<>(TextSpans.occurrences(text, name));
        aliases.forEach(a -> all.addAll(TextSpans.occurrences(text, a)));
        return TextSpans.outermost(all);
    }

    static ObjectNode describe(Stage.Entity e) {
        ObjectNode o = Json.mapper().createObjectNode();
        o.put("ref", e.ref).put("name", e.name).put("type", e.type.name().toLowerCase(Locale.ROOT));
        o.put("description", e.description);
        o.set("aliases", Stage.strings(List.copyOf(e.aliases)));
        if (e.memoryId != null) {
            o.put("memory_id", e.memoryId);
        }
        return o;
    }
}
