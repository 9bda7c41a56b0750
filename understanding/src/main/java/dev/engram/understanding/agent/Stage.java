package dev.engram.understanding.agent;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Pattern;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.understanding.TextSpans;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One paragraph's construction by the agent: what it has read and searched, and its staged writes — entities,
 * relations, claims and todos. Every tool call is answered here with a JSON observation; nothing reaches memory until
 * the agent finishes, and then all of it at once, as the paragraph's {@link Extraction}.
 *
 * <p>The four steps are enforced, not only asked for: no write before the paragraph was read, no new entity before a
 * search that covers its name, no entity whose name (or an alias) the paragraph does not contain, no relation or merge
 * without a quote from the paragraph.
 */
final class Stage {

    /** A staged entity: new (no memory id), or a mention of one memory holds. */
    static final class Entity {
        final String ref;
        String name;
        EntityType type;
        String description;
        final Set<String> aliases = new LinkedHashSet<>();
        String memoryId;

        Entity(String ref, String name, EntityType type, String description, String memoryId) {
            this.ref = ref;
            this.name = name;
            this.type = type;
            this.description = description;
            this.memoryId = memoryId;
        }
    }

    /** A staged relation between two staged entities. */
    static final class Relation {
        final String ref;
        Entity head;
        String relation;
        Entity tail;
        Span evidence;
        double confidence;

        Relation(String ref, Entity head, String relation, Entity tail, Span evidence, double confidence) {
            this.ref = ref;
            this.head = head;
            this.relation = relation;
            this.tail = tail;
            this.evidence = evidence;
            this.confidence = confidence;
        }
    }

    /** A todo, carried between the paragraphs of a document. */
    record Todo(String id, String text, boolean done) {}

    private final String namespace;
    private final PassageEvent.Upsert passage;
    private final MemoryView memory;
    private final Carry carried;
    private final StagedEntities entities;
    private final Map<String, Relation> relations = new LinkedHashMap<>();
    private final List<Extraction.Claim> claims = new ArrayList<>();
    private final Todos todos;
    private final Searches searches = new Searches();

    /** Most claims (review items to be) one paragraph may make. */
    static final int MAX_CLAIMS = 20;

    private boolean read;
    private int nextRelation = 1;

    /** What one paragraph hands to the next of its document: todos and the names it staged. */
    record Carry(List<Todo> todos, List<String> entities) {
        static final Carry NONE = new Carry(List.of(), List.of());

        Carry {
            todos = List.copyOf(todos);
            entities = List.copyOf(entities);
        }
    }

    Stage(PassageEvent.Upsert passage, MemoryView memory, Carry carried) {
        this.namespace = passage.namespace();
        this.passage = passage;
        this.memory = memory;
        this.carried = carried;
        this.entities = new StagedEntities(passage.text());
        this.todos = new Todos(carried.todos());
    }

    /** Whether the paragraph was read. */
    boolean read() {
        return read;
    }

    /** Whether nothing is staged: no entity, no relation, no claim. */
    boolean empty() {
        return entities.isEmpty() && relations.isEmpty() && claims.isEmpty();
    }

    // ---- reading

    ObjectNode readParagraph() {
        read = true;
        ObjectNode o = ok();
        o.put("document_id", passage.documentId());
        o.put("title", passage.title());
        o.set("headings", strings(passage.headings()));
        o.put("ordinal", passage.ordinal());
        o.put("text", passage.text());
        return o;
    }

    ObjectNode browseContext() {
        ObjectNode o = ok();
        o.put("document_id", passage.documentId());
        o.put("title", passage.title());
        o.set("headings", strings(passage.headings()));
        o.put("ordinal", passage.ordinal());
        o.set("entities_of_earlier_paragraphs", strings(carried.entities()));
        o.set("open_todos", todos.describeOpen());
        ArrayNode types = o.putArray("relation_types_in_use");
        for (MemoryView.RelationType t : memory.relationTypes(namespace, 30)) {
            types.addObject()
                    .put("relation", t.relation())
                    .put("passages", t.passages())
                    .put("status", t.status());
        }
        return o;
    }

    ObjectNode searchKg(String query, String by, int limit) {
        List<MemoryView.KnownEntity> found = "embedding".equals(by)
                ? memory.entitiesLike(namespace, query, limit)
                : memory.entitiesNamed(namespace, query, limit);
        searches.answered(query, found);
        ObjectNode o = ok();
        ArrayNode out = o.putArray("memory");
        for (MemoryView.KnownEntity e : found) {
            out.addObject()
                    .put("id", e.id())
                    .put("name", e.name())
                    .put("type", e.type())
                    .put("description", e.description())
                    .set("aliases", strings(e.aliases()));
        }
        ArrayNode staged = o.putArray("staged");
        for (Entity e : entities.values()) {
            if (key(e.name).contains(key(query)) || e.aliases.stream().anyMatch(a -> key(a).contains(key(query)))) {
                staged.add(StagedEntities.describe(e));
            }
        }
        return o;
    }

    ObjectNode exploreFusion(String query, int limit) {
        ObjectNode o = ok();
        ArrayNode out = o.putArray("passages");
        for (MemoryView.KnownPassage p : memory.related(namespace, query, limit)) {
            out.addObject()
                    .put("passage_id", p.passageId())
                    .put("document_id", p.documentId())
                    .put("memory", abbreviate(p.memory(), 400));
        }
        return o;
    }

    // ---- entities

    ObjectNode createEntity(String name, String type, String description, List<String> aliases) {
        String problem = mustHaveRead();
        if (problem != null) {
            return error(problem);
        }
        String n = name.strip();
        if (n.isEmpty()) {
            return error("an entity needs a name");
        }
        Entity same = entities.byName(n);
        if (same != null) {
            return error("'" + n + "' is staged already as " + same.ref + ": change it with update_entity");
        }
        if (!searches.covers(n) && aliases.stream().noneMatch(searches::covers)) {
            return error("search memory for '" + n + "' first (search_kg): it may hold it already");
        }
        List<String> forms = new ArrayList<>();
        for (String a : aliases) {
            if (!a.isBlank() && !key(a).equals(key(n))) {
                forms.add(a.strip());
            }
        }
        if (TextSpans.occurrences(passage.text(), n).isEmpty()) {
            return error("'" + n + "' does not occur in the paragraph: a new entity is named as the paragraph names"
                    + " it (attach a mention to an entity memory holds with update_entity)");
        }
        for (String a : forms) {
            if (TextSpans.occurrences(passage.text(), a).isEmpty()) {
                return error("the alias '" + a + "' does not occur in the paragraph");
            }
        }
        Entity e = new Entity(entities.nextRef(), n, type(type), description == null ? "" : description.strip(), null);
        e.aliases.addAll(forms);
        entities.put(e);
        return ok().put("ref", e.ref).put("mentions", entities.spans(e).size());
    }

    ObjectNode updateEntity(String ref, String description, String type, List<String> addAliases) {
        String problem = mustHaveRead();
        if (problem != null) {
            return error(problem);
        }
        for (String a : addAliases) {
            if (TextSpans.occurrences(passage.text(), a).isEmpty()) {
                return error("the alias '" + a + "' does not occur in the paragraph");
            }
        }
        Entity e = entities.get(ref);
        if (e == null) {
            e = entities.byName(ref);
        }
        if (e == null) {
            e = entities.attachedTo(ref);
        }
        MemoryView.KnownEntity known = e == null ? searches.known(ref) : null;
        if (known != null) {
            e = entities.attachedTo(known.id());
        }
        if (e == null) {
            if (known == null) {
                return unknownEntity(ref);
            }
            Entity attached = entities.mention(known);
            addAliases.forEach(a -> StagedEntities.addAlias(attached, a));
            if (entities.spans(attached).isEmpty()) {
                return error("'" + known.name() + "' is not mentioned in this paragraph: pass the form the paragraph"
                        + " uses in add_aliases");
            }
            entities.put(attached);
            e = attached;
        } else {
            Entity target = e;
            addAliases.forEach(a -> StagedEntities.addAlias(target, a));
        }
        if (description != null) {
            e.description = description.strip();
        }
        if (type != null) {
            e.type = type(type);
        }
        return ok().put("ref", e.ref).set("entity", StagedEntities.describe(e));
    }

    ObjectNode mergeEntities(String keepRef, String mergeRef, String quote, String reason) {
        String problem = mustHaveRead();
        if (problem != null) {
            return error(problem);
        }
        Span evidence = TextSpans.locate(passage.text(), quote);
        if (evidence == null) {
            return error("the evidence is not a quote from the paragraph");
        }
        Entity keep = stagedOrMention(keepRef);
        Entity merge = stagedOrMention(mergeRef);
        String keepName = keep != null ? keep.name : searches.knownName(keepRef);
        String mergeName = merge != null ? merge.name : searches.knownName(mergeRef);
        if (keepName == null) {
            return unknownEntity(keepRef);
        }
        if (mergeName == null) {
            return unknownEntity(mergeRef);
        }
        if (keep != null && keep == merge) {
            return error("an entity cannot be merged with itself");
        }
        boolean compatible = keep == null
                || merge == null
                || keep.type == EntityType.OTHER
                || merge.type == EntityType.OTHER
                || keep.type == merge.type;
        if (keep != null && merge != null && keep.memoryId == null && merge.memoryId == null && compatible) {
            // two entities this paragraph created: one, under the name kept
            if (!key(merge.name).equals(key(keep.name))) {
                keep.aliases.add(merge.name);
            }
            merge.aliases.forEach(a -> StagedEntities.addAlias(keep, a));
            if (keep.description.isEmpty()) {
                keep.description = merge.description;
            }
            if (keep.type == EntityType.OTHER) {
                keep.type = merge.type;
            }
            entities.remove(merge.ref);
            for (Relation r : relations.values()) {
                r.head = r.head == merge ? keep : r.head;
                r.tail = r.tail == merge ? keep : r.tail;
            }
            relations.values().removeIf(r -> r.head == r.tail);
            return ok().put("ref", keep.ref).set("entity", StagedEntities.describe(keep));
        }
        // memory holds one of them, or their types differ: the rules of memory decide, never the stage. Nothing is
        // written but a claim, which the memory step checks once the record is resolved: a merge resolution did not
        // make becomes a review item
        if (claims.size() >= MAX_CLAIMS) {
            return error("this paragraph has " + MAX_CLAIMS + " claims already");
        }
        claims.add(new Extraction.Claim(
                Extraction.Claim.SAME_AS,
                keepName,
                mergeName,
                (reason == null || reason.isBlank() ? "" : reason.strip() + " — ") + "\"" + quote.strip() + "\""));
        return ok().put("claimed", "same_as")
                .put("note", "memory's resolution rules decide; if they refuse, the merge goes to review");
    }

    ObjectNode deleteEntity(String ref, String reason) {
        Entity e = entities.get(ref);
        if (e == null) {
            e = entities.byName(ref);
        }
        if (e != null) {
            Entity gone = e;
            entities.remove(gone.ref);
            int before = relations.size();
            relations.values().removeIf(r -> r.head == gone || r.tail == gone);
            return ok().put("unstaged", gone.ref).put("relations_unstaged", before - relations.size());
        }
        String name = searches.knownName(ref);
        if (name == null) {
            return unknownEntity(ref);
        }
        if (claims.size() >= MAX_CLAIMS) {
            return error("this paragraph has " + MAX_CLAIMS + " claims already");
        }
        claims.add(new Extraction.Claim(Extraction.Claim.DELETE_ENTITY, name + " (" + ref + ")", "", reason));
        return ok().put("claimed", "delete_entity")
                .put("note", "memory keeps what its documents support; a person reviews the deletion");
    }

    // ---- relations

    ObjectNode createRelation(String headRef, String relation, String tailRef, String quote, double confidence) {
        String problem = mustHaveRead();
        if (problem != null) {
            return error(problem);
        }
        Entity head = stagedOrMention(headRef);
        if (head == null) {
            return unknownEntity(headRef);
        }
        Entity tail = stagedOrMention(tailRef);
        if (tail == null) {
            return unknownEntity(tailRef);
        }
        if (head == tail) {
            return error("a relation needs two different entities");
        }
        Span evidence = TextSpans.locate(passage.text(), quote);
        if (evidence == null) {
            return error("the evidence is not a quote from the paragraph");
        }
        String rel = relationName(relation);
        if (rel.isEmpty()) {
            return error("the relation has no words");
        }
        for (Relation r : relations.values()) {
            if (r.head == head && r.tail == tail && r.relation.equals(rel)) {
                return ok().put("ref", r.ref).put("note", "staged already");
            }
        }
        // an entity memory holds, mentioned here, is staged by the relation that needs it
        entities.putIfAbsent(head);
        entities.putIfAbsent(tail);
        Relation r = new Relation("r" + nextRelation++, head, rel, tail, evidence, confidence);
        relations.put(r.ref, r);
        return ok().put("ref", r.ref);
    }

    ObjectNode updateRelation(String ref, String relation, String quote, Double confidence) {
        Relation r = relations.get(ref);
        if (r == null) {
            return error("no staged relation '" + ref + "': only relations of this paragraph can be changed (use"
                    + " mark_for_review for one memory holds)");
        }
        Span evidence = null;
        if (quote != null) {
            evidence = TextSpans.locate(passage.text(), quote);
            if (evidence == null) {
                return error("the evidence is not a quote from the paragraph");
            }
        }
        if (relation != null) {
            String rel = relationName(relation);
            if (rel.isEmpty()) {
                return error("the relation has no words");
            }
            r.relation = rel;
        }
        if (evidence != null) {
            r.evidence = evidence;
        }
        if (confidence != null) {
            r.confidence = confidence;
        }
        return ok().put("ref", r.ref);
    }

    ObjectNode deleteRelation(String ref, String reason) {
        if (relations.remove(ref) != null) {
            return ok().put("unstaged", ref);
        }
        if (!ref.contains(" ")) {
            return error("no staged relation '" + ref + "': to ask for a review of a relation memory holds, describe it"
                    + " in words");
        }
        if (claims.size() >= MAX_CLAIMS) {
            return error("this paragraph has " + MAX_CLAIMS + " claims already");
        }
        claims.add(new Extraction.Claim(Extraction.Claim.DELETE_RELATION, ref, "", reason));
        return ok().put("claimed", "delete_relation")
                .put("note", "memory keeps what its documents support; a person reviews the deletion");
    }

    // ---- process

    ObjectNode markForReview(String subject, String reason) {
        if (claims.size() >= MAX_CLAIMS) {
            return error("this paragraph has " + MAX_CLAIMS + " claims already");
        }
        claims.add(new Extraction.Claim(Extraction.Claim.REVIEW, subject, "", reason));
        return ok().put("claimed", "review");
    }

    ObjectNode createTodo(String text) {
        return todos.create(text);
    }

    ObjectNode completeTodo(String id) {
        return todos.complete(id);
    }

    ObjectNode progress(int roundsUsed, int roundsLeft, long tokensUsed, long tokensLeft) {
        ObjectNode o = ok();
        o.put("read", read);
        o.put("rounds_used", roundsUsed).put("rounds_left", roundsLeft);
        o.put("tokens_used", tokensUsed).put("tokens_left", tokensLeft);
        ArrayNode es = o.putArray("entities");
        entities.values().forEach(e -> es.add(StagedEntities.describe(e)));
        ArrayNode rs = o.putArray("relations");
        for (Relation r : relations.values()) {
            rs.addObject()
                    .put("ref", r.ref)
                    .put("head", r.head.ref)
                    .put("relation", r.relation)
                    .put("tail", r.tail.ref);
        }
        o.put("claims", claims.size());
        o.set("open_todos", todos.describeOpen());
        return o;
    }

    // ---- the outcome

    /** The staged writes as the paragraph's extraction: memory, questions and hyperedges come from {@code base}. */
    Extraction toExtraction(
            Extraction base, String extractor, String model, Extraction.TokenUsage usage, Extraction.Construction c) {
        List<Extraction.Entity> out = new ArrayList<>();
        for (Entity e : entities.values()) {
            out.add(new Extraction.Entity(e.name, e.type, e.description, List.copyOf(e.aliases), entities.spans(e)));
        }
        List<Extraction.Fact> facts = new ArrayList<>();
        for (Relation r : relations.values()) {
            facts.add(new Extraction.Fact(r.head.name, r.relation, r.tail.name, r.evidence, r.confidence));
        }
        return new Extraction(
                base.memory(), out, facts, base.relations(), base.questions(), extractor, model, usage, c);
    }

    List<Extraction.Claim> claims() {
        return List.copyOf(claims);
    }

    /** What the next paragraph of the document gets. */
    Carry carry() {
        List<String> names = new ArrayList<>(carried.entities());
        for (Entity e : entities.values()) {
            if (!names.contains(e.name)) {
                names.add(e.name);
            }
        }
        int from = Math.max(0, names.size() - 100);
        return new Carry(todos.open(), names.subList(from, names.size()));
    }

    // ---- helpers

    private String mustHaveRead() {
        return read ? null : "read the paragraph first (read_paragraph)";
    }

    /** A staged entity by ref, memory id or name, or a new mention of a memory entity the paragraph names. */
    private Entity stagedOrMention(String ref) {
        Entity e = entities.get(ref);
        if (e == null) {
            e = entities.attachedTo(ref);
        }
        if (e == null) {
            e = entities.byName(ref);
        }
        MemoryView.KnownEntity known = e == null ? searches.known(ref) : null;
        if (known != null) {
            Entity attached = entities.attachedTo(known.id());
            if (attached != null) {
                return attached;
            }
            Entity m = entities.mention(known);
            e = entities.spans(m).isEmpty() ? null : m;
        }
        return e;
    }

    private ObjectNode unknownEntity(String ref) {
        return error("no entity '" + ref + "' is staged, and no search returned it: search memory (search_kg) or"
                + " create it");
    }

    static EntityType type(String name) {
        if (name == null) {
            return EntityType.OTHER;
        }
        try {
            return EntityType.valueOf(name.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return EntityType.OTHER;
        }
    }

    private static final Pattern SPACES = Pattern.compile("[\\t\\n\\x0B\\f\\r ]+");

    static String relationName(String relation) {
        String r = SPACES.matcher(relation.strip().toLowerCase(Locale.ROOT)).replaceAll(" ");
        return r.length() <= 60 ? r : r.substring(0, 60).strip();
    }

    static String key(String s) {
        return SPACES.matcher(s.strip().toLowerCase(Locale.ROOT)).replaceAll(" ");
    }

    static ArrayNode strings(List<String> values) {
        ArrayNode a = Json.mapper().createArrayNode();
        values.forEach(a::add);
        return a;
    }

    private static String abbreviate(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max - 3) + "...";
    }

    static ObjectNode ok() {
        return Json.mapper().createObjectNode().put("ok", true);
    }

    static ObjectNode error(String message) {
        return Json.mapper().createObjectNode().put("ok", false).put("error", message);
    }
}
