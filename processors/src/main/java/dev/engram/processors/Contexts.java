package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.StoredVectors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
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

    /**
     * The cosine above which two passages are about one subject: passages about different subjects of one field
     * (two footballers, two films) stay below it.
     */
    static final double ALIKE_PASSAGES = 0.8;

    /** How shared context that is a shared document starts. */
    static final String SAME_DOCUMENT = "both in document ";

    private final MemoryTransaction tx;
    private final Map<String, Context> contexts = new HashMap<>();

    Contexts(MemoryTransaction tx) {
        this.tx = tx;
    }

    /** Shared context of the two surfaces (a document, co-mentioned entities); empty when there is none. */
    List<String> shared(String a, String b) {
        Context ca = context(a);
        Context cb = context(b);
        List<String> out = new ArrayList<>();
        for (String d : ca.documents) {
            if (cb.documents.contains(d)) {
                out.add(SAME_DOCUMENT + d);
                break;
            }
        }
        if (!out.isEmpty()) {
            return out;
        }
        // the turns of one session of a conversation support each other, as the passages of one document do
        for (String session : ca.sessions) {
            if (cb.sessions.contains(session)) {
                int end = session.indexOf('\u0000');
                return List.of("both in session " + (end < 0 ? session : session.substring(0, end)));
            }
        }
        // Years and numbers are shared by unrelated things and count for nothing; places are mentioned with everything,
        // so one shared place is not enough, two are.
        List<String> shared = new ArrayList<>();
        boolean specific = false;
        for (Map.Entry<String, Neighbour> n : ca.neighbours.entrySet()) {
            String t = n.getValue().type();
            if (t.equals(EntityType.DATE.wireName()) || t.equals(EntityType.NUMBER.wireName())) {
                continue;
            }
            if (!n.getKey().equals(a) && !n.getKey().equals(b) && cb.neighbours.containsKey(n.getKey())) {
                shared.add("both mentioned with \"" + n.getValue().name() + "\"");
                specific |= !t.equals(EntityType.PLACE.wireName());
            }
        }
        if (specific || shared.size() >= 2) {
            return shared.subList(0, Math.min(3, shared.size()));
        }
        // the passages that mention them say the same things
        double best = -1;
        for (float[] va : ca.vectors) {
            for (float[] vb : cb.vectors) {
                best = Math.max(best, PairRules.cosine(va, vb));
            }
        }
        return best >= ALIKE_PASSAGES
                ? List.of(String.format(Locale.ROOT, "their passages alike (cosine %.2f)", best))
                : List.of();
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
