package dev.engram.query;

import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.Words;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A namespace's words for its snapshots, kept from one build to the next: each passage's title and text, and the names
 * of its knowledge units (entities by their resolved name, facts, relations). A build writes what it read ({@link
 * #parts}) and the names its entities resolved to ({@link #entities}); each is published before the snapshot is
 * served. Where the words cannot be written (a full or read-only disk), they are written again on the heap, whole,
 * and stay there until the namespace is dropped. Used by one build at a time, under the namespace's lock.
 */
final class SnapshotWords implements Closeable {

    /** Logged under the loader's name, as the snapshots these words serve. */
    private static final Logger LOG = LoggerFactory.getLogger(GraphLoader.class);

    /** What a kept passage gives the words: its part (its passage is null when it is left out of snapshots). */
    interface Source {
        PassagePart part(String passageId);

        Collection<PassagePart> all();
    }

    private final String ns;
    private Words passages;
    private Words units;
    private boolean onHeap;
    /** Each entity's name as the units hold it. */
    private Map<String, String> entityNames = new HashMap<>();

    /** The last build's parts, to write everything again on the heap if the disk refuses. */
    private Source last;

    /** @param open a namespace's words of one kind ("words", "units"), empty */
    SnapshotWords(String ns, Function<String, Words> open) {
        this.ns = ns;
        Words p = open.apply("words");
        Words u;
        try {
            u = open.apply("units");
        } catch (RuntimeException e) {
            closeQuietly(p);
            throw e;
        }
        this.passages = p;
        this.units = u;
    }

    Words passages() {
        return passages;
    }

    Words units() {
        return units;
    }

    /**
     * Writes the parts a build read: every one after clearing the words ({@code changed} null: a whole read), else
     * those of the passages {@code changed} names (a passage no longer there is removed). Passage words are published;
     * units are published with the entities.
     */
    void parts(Collection<String> changed, Source source) {
        last = source;
        try {
            write(changed, source);
        } catch (IOException | RuntimeException e) {
            toHeap(e);
        }
    }

    /** Writes the entities' names as the build resolved them (ids and names in the same order), and publishes units. */
    void entities(List<String> ids, List<String> names) {
        try {
            writeEntities(ids, names);
            units.publish();
        } catch (IOException | RuntimeException e) {
            toHeap(e);
            try {
                writeEntities(ids, names);
                units.publish();
            } catch (IOException impossible) {
                throw new UncheckedIOException(impossible); // on the heap: no I/O
            }
        }
    }

    private void write(Collection<String> changed, Source source) throws IOException {
        if (changed == null) {
            passages.clear();
            units.clear();
            entityNames = new HashMap<>();
            for (PassagePart part : source.all()) {
                put(part);
            }
        } else {
            for (String id : changed) {
                passages.remove(id);
                units.removeGroup(id);
                PassagePart part = source.part(id);
                if (part != null) {
                    put(part);
                }
            }
        }
        passages.publish();
    }

    /** A part's words: its passage's, and its facts' and relations' (keyed by its passage and their ordinals). */
    private void put(PassagePart part) throws IOException {
        MemoryGraph.Passage p = part.passage();
        if (p == null) {
            return;
        }
        passages.putPassage(p.id(), p.title(), p.text());
        for (PassagePart.Fact f : part.facts()) {
            units.put(MemoryGraph.unitKey('f', f.key()), p.id(), f.text());
        }
        List<PassagePart.Relation> relations = part.relations();
        for (int r = 0; r < relations.size(); r++) {
            units.put(
                    MemoryGraph.unitKey('r', relationKey(p.id(), r)),
                    p.id(),
                    relations.get(r).text());
        }
    }

    /** The key of a passage's {@code r}-th relation (as extracted) in the unit words. */
    static String relationKey(String passageId, int r) {
        return passageId + "#r" + r;
    }

    private void writeEntities(List<String> ids, List<String> names) throws IOException {
        Map<String, String> now = HashMap.newHashMap(ids.size());
        for (int e = 0; e < ids.size(); e++) {
            String id = ids.get(e);
            String name = names.get(e);
            now.put(id, name);
            if (!name.equals(entityNames.get(id))) {
                units.put(MemoryGraph.unitKey('e', id), null, name);
            }
        }
        for (String gone : entityNames.keySet()) {
            if (!now.containsKey(gone)) {
                units.remove(MemoryGraph.unitKey('e', gone));
            }
        }
        entityNames = now;
    }

    /** Writes everything again on the heap: the disk refused a write. */
    private void toHeap(Exception cause) {
        if (onHeap) {
            throw cause instanceof RuntimeException r ? r : new UncheckedIOException((IOException) cause);
        }
        LOG.warn("namespace {}: its words could not be written, they are kept in the heap: {}", ns, cause.toString());
        closeQuietly(passages);
        closeQuietly(units);
        onHeap = true;
        passages = Words.inMemory();
        units = Words.inMemory();
        entityNames = new HashMap<>();
        if (last != null) {
            try {
                write(null, last);
            } catch (IOException impossible) {
                throw new UncheckedIOException(impossible); // on the heap: no I/O
            }
        }
    }

    private void closeQuietly(Words w) {
        try {
            w.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("namespace {}: closing its words: {}", ns, e.toString());
        }
    }

    @Override
    public void close() {
        closeQuietly(passages);
        closeQuietly(units);
    }
}
