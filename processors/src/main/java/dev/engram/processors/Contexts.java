package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.StoredVectors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * The context of surface entities, within one record: the documents, conversation sessions and co-mentioned surfaces of a surface's first
 * {@link #CONTEXT_PASSAGES} passages (by passage id) and the embeddings of the first {@link #CONTEXT_VECTORS}, and what
 * two surfaces share of it — the supporting evidence that partial and alike names, and a bare mention of a described
 * name, need before they merge.
 */
final class Contexts {

    /** Passages of a surface read for its context (documents and co-mentioned entities). */
    static final int CONTEXT_PASSAGES = 32;

    /** Passages of a surface whose embeddings are compared with the other surface's. */
    static final int CONTEXT_VECTORS = 8;

    private final MemoryTransaction tx;
    private final Map<String, Context> contexts = new HashMap<>();

    Contexts(MemoryTransaction tx) {
        this.tx = tx;
    }

    /** What the two surfaces share of their context; {@link SharedContext#NONE} when nothing. */
    SharedContext shared(String a, String b) {
        Context ca = context(a);
        Context cb = context(b);
        String document = null;
        for (String d : ca.documents) {
            if (cb.documents.contains(d)) {
                document = d;
                break;
            }
        }
        // the turns of one session of a conversation support each other, as the passages of one document do
        String session = null;
        for (String s : ca.sessions) {
            if (cb.sessions.contains(s)) {
                int end = s.indexOf('\u0000');
                session = end < 0 ? s : s.substring(0, end);
                break;
            }
        }
        // Years and numbers are shared by unrelated things and count for nothing; places are mentioned with everything.
        List<String> neighbours = new ArrayList<>();
        int specific = 0;
        for (Map.Entry<String, Neighbour> n : ca.neighbours.entrySet()) {
            String t = n.getValue().type();
            if (t.equals(EntityType.DATE.wireName()) || t.equals(EntityType.NUMBER.wireName())) {
                continue;
            }
            if (!n.getKey().equals(a) && !n.getKey().equals(b) && cb.neighbours.containsKey(n.getKey())) {
                neighbours.add(n.getValue().name());
                specific += t.equals(EntityType.PLACE.wireName()) ? 0 : 1;
            }
        }
        // the passages that mention them say the same things
        double best = 0;
        for (float[] va : ca.vectors) {
            for (float[] vb : cb.vectors) {
                best = Math.max(best, PairRules.cosine(va, vb));
            }
        }
        if (document == null && session == null && neighbours.isEmpty() && best == 0) {
            return SharedContext.NONE;
        }
        return new SharedContext(document, session, neighbours, specific, best);
    }

    /** The documents, sessions and co-mentioned surfaces of a surface's first passages (by passage id). */
    private record Context(
            Set<String> documents, Set<String> sessions, Map<String, Neighbour> neighbours, List<float[]> vectors) {}

    private record Neighbour(String name, String type) {}

    private Context context(String sid) {
        return contexts.computeIfAbsent(sid, id -> {
            Set<String> documents = new TreeSet<>();
            Set<String> sessions = new TreeSet<>();
            Map<String, Neighbour> neighbours = new TreeMap<>();
            List<float[]> vectors = new ArrayList<>();
            String ns = tx.namespace();
            try (KeyValueIterator<String, MentionRecord> it = tx.mentions().prefixScan(Keys.prefix(ns, id))) {
                for (int n = 0; it.hasNext() && n < CONTEXT_PASSAGES; n++) {
                    var kv = it.next();
                    documents.add(kv.value.documentId());
                    if (kv.value.session() != null) {
                        sessions.add(kv.value.session());
                    }
                    String passage = Keys.last(kv.key);
                    if (vectors.size() < CONTEXT_VECTORS) {
                        byte[] v = tx.vectors().get(Keys.of(ns, passage));
                        if (v != null) {
                            vectors.add(StoredVectors.decode(v));
                        }
                    }
                    String lines = tx.passageEntities().get(Keys.of(ns, passage));
                    if (lines == null) {
                        continue;
                    }
                    for (String line : lines.split("\n", -1)) {
                        String[] parts = line.split(" ", 3);
                        if (parts.length == 3) {
                            neighbours.putIfAbsent(parts[0], new Neighbour(parts[2], parts[1]));
                        }
                    }
                }
            }
            return new Context(documents, sessions, neighbours, vectors);
        });
    }
}
