package dev.engram.processors;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * Passages waiting for their turn, taken round the namespaces: one of each namespace that waits in turn, each
 * namespace's in the order they came. A namespace with thousands of passages waiting holds up another's next one by
 * one passage at most.
 */
final class NamespaceTurns {

    private final Map<String, LinkedHashSet<String>> queues = new HashMap<>();
    private final Map<String, String> namespaceOf = new HashMap<>();
    private final ArrayDeque<String> rotation = new ArrayDeque<>();

    /** Adds a passage at the end of its namespace's queue; false when it waits already (it keeps its place). */
    boolean add(String namespace, String passageId) {
        if (namespaceOf.putIfAbsent(passageId, namespace) != null) {
            return false;
        }
        queues.computeIfAbsent(namespace, ns -> {
                    rotation.addLast(ns);
                    return new LinkedHashSet<>();
                })
                .add(passageId);
        return true;
    }

    /** Takes a passage out of its queue; false when it was not waiting. */
    boolean remove(String passageId) {
        String ns = namespaceOf.remove(passageId);
        if (ns == null) {
            return false;
        }
        LinkedHashSet<String> queue = queues.get(ns);
        queue.remove(passageId);
        if (queue.isEmpty()) {
            queues.remove(ns);
            rotation.remove(ns);
        }
        return true;
    }

    /** The next passage in turn (taken out), or null when none waits. */
    String next() {
        String ns = rotation.pollFirst();
        if (ns == null) {
            return null;
        }
        LinkedHashSet<String> queue = queues.get(ns);
        Iterator<String> it = queue.iterator();
        String passageId = it.next();
        it.remove();
        namespaceOf.remove(passageId);
        if (queue.isEmpty()) {
            queues.remove(ns);
        } else {
            rotation.addLast(ns);
        }
        return passageId;
    }

    boolean waits(String passageId) {
        return namespaceOf.containsKey(passageId);
    }

    /** Whether any passage of {@code namespace} waits. */
    boolean hasWaiting(String namespace) {
        return queues.containsKey(namespace);
    }

    int size() {
        return namespaceOf.size();
    }

    boolean isEmpty() {
        return namespaceOf.isEmpty();
    }

    void clear() {
        queues.clear();
        namespaceOf.clear();
        rotation.clear();
    }
}
