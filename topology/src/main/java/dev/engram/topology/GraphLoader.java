package dev.engram.topology;

import dev.engram.processors.EntityNames;
import dev.engram.processors.Hashing;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.Keys;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StoredPassage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Builds a namespace's {@link MemoryGraph} from this instance's state stores and keeps it while the namespace does
 * not change: a snapshot is rebuilt when the namespace's memory version has moved on and the snapshot is older than
 * {@code maxStaleness}, so a burst of writes does not rebuild it on every query.
 */
final class GraphLoader {

    private static final StringSerializer KEYS = new StringSerializer();

    private record Cached(MemoryGraph graph, long builtAtNanos) {}

    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();
    private final long maxStalenessNanos;

    GraphLoader(long maxStalenessMillis) {
        this.maxStalenessNanos = maxStalenessMillis * 1_000_000L;
    }

    MemoryGraph graph(String ns, NamespaceState state, Function<String, ReadOnlyKeyValueStore<String, ?>> stores) {
        Cached c = cache.get(ns);
        long now = System.nanoTime();
        if (c != null && (c.graph().version() == state.version() || now - c.builtAtNanos() < maxStalenessNanos)) {
            return c.graph();
        }
        MemoryGraph g = build(ns, state.version(), stores);
        cache.put(ns, new Cached(g, now));
        return g;
    }

    @SuppressWarnings("unchecked")
    private static MemoryGraph build(
            String ns, long version, Function<String, ReadOnlyKeyValueStore<String, ?>> stores) {
        var passages =
                (ReadOnlyKeyValueStore<String, StoredPassage>) stores.apply(dev.engram.stores.Stores.MEMORY_PASSAGES);
        var vectors = (ReadOnlyKeyValueStore<String, byte[]>) stores.apply(dev.engram.stores.Stores.MEMORY_VECTORS);
        var embeddings =
                (ReadOnlyKeyValueStore<String, Embeddings>) stores.apply(dev.engram.stores.Stores.MEMORY_EMBEDDINGS);
        MemoryGraph.Builder b = MemoryGraph.builder(version);
        try (KeyValueIterator<String, StoredPassage> it = passages.prefixScan(Keys.prefix(ns), KEYS)) {
            while (it.hasNext()) {
                KeyValue<String, StoredPassage> kv = it.next();
                StoredPassage p = kv.value;
                byte[] vector = vectors.get(kv.key);
                Embeddings emb = embeddings.get(kv.key);
                if (vector == null) {
                    continue; // written between the two reads; the next snapshot has it
                }
                int index = b.passage(
                        new MemoryGraph.Passage(
                                p.passageId(),
                                p.documentId(),
                                p.title(),
                                p.headings(),
                                p.text(),
                                p.memory(),
                                p.start(),
                                p.end()),
                        VectorCodec.fromBytes(vector));
                Extraction x = p.extraction();
                for (int i = 0; i < x.entities().size(); i++) {
                    Extraction.Entity e = x.entities().get(i);
                    String normalized = EntityNames.normalize(e.name());
                    if (!normalized.isEmpty()) {
                        int entity = b.entity(Hashing.id(ns, normalized), e.name());
                        b.link(entity, index);
                        if (emb != null && i < emb.entities().size()) {
                            b.entityVector(entity, emb.entities().get(i));
                        }
                    }
                }
                for (Extraction.Relation r : x.relations()) {
                    int[] members = r.entities().stream()
                            .mapToInt(name -> entity(b, ns, name))
                            .filter(i -> i >= 0)
                            .distinct()
                            .toArray();
                    if (members.length >= 2) {
                        b.relation(r.relation() + ": " + String.join(", ", r.entities()), index, members);
                    }
                }
                if (emb == null) {
                    continue;
                }
                for (int f = 0; f < x.facts().size() && f < emb.facts().size(); f++) {
                    Extraction.Fact fact = x.facts().get(f);
                    b.fact(
                            fact.text(),
                            index,
                            entity(b, ns, fact.head()),
                            entity(b, ns, fact.tail()),
                            fact.confidence(),
                            emb.facts().get(f));
                }
            }
        }
        return b.build();
    }

    private static int entity(MemoryGraph.Builder b, String ns, String name) {
        String normalized = EntityNames.normalize(name);
        Integer i = normalized.isEmpty() ? null : b.entityIndex(Hashing.id(ns, normalized));
        return i == null ? -1 : i;
    }
}
