package dev.engram.understanding.agent;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A document's todos as one paragraph works on them: those carried from the earlier paragraphs, and those it adds or
 * completes; the open ones go on to the next paragraph.
 */
final class Todos {

    /** Most open todos of a document. */
    static final int MAX_TODOS = 50;

    private final Map<String, Stage.Todo> todos = new LinkedHashMap<>();
    private int nextTodo;

    Todos(List<Stage.Todo> carried) {
        for (Stage.Todo t : carried) {
            todos.put(t.id(), t);
            nextTodo = Math.max(nextTodo, number(t.id()));
        }
        nextTodo++;
    }

    ObjectNode create(String text) {
        if (todos.values().stream().filter(t -> !t.done()).count() >= MAX_TODOS) {
            return Stage.error("there are " + MAX_TODOS + " open todos already: complete some first");
        }
        Stage.Todo t = new Stage.Todo("t" + nextTodo++, text.strip(), false);
        todos.put(t.id(), t);
        return Stage.ok().put("id", t.id());
    }

    ObjectNode complete(String id) {
        Stage.Todo t = todos.get(id);
        if (t == null) {
            return Stage.error("no todo '" + id + "'");
        }
        todos.put(id, new Stage.Todo(id, t.text(), true));
        return Stage.ok().put("id", id);
    }

    /** The open todos, as the agent sees them. */
    ArrayNode describeOpen() {
        ArrayNode out = Json.mapper().createArrayNode();
        for (Stage.Todo t : todos.values()) {
            if (!t.done()) {
                out.addObject().put("id", t.id()).put("text", t.text());
            }
        }
        return out;
    }

    /** The open todos, for the next paragraph of the document. */
    List<Stage.Todo> open() {
        return todos.values().stream().filter(t -> !t.done()).toList();
    }

    private static int number(String id) {
        try {
            return Integer.parseInt(id.substring(1));
        } catch (RuntimeException e) {
            return 0;
        }
    }
}
