package dev.engram.stores;

import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.MirrorRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Typed, read-only access to the memory stores of one instance: the read side's only way into them, so that every
 * key layout stays here with the stores that define it. Stores are looked up by name on each call (they move
 * between instances on a rebalance).
 */
public final class MemoryReader {

    private static final StringSerializer KEYS = new StringSerializer();

    private final Function<String, ReadOnlyKeyValueStore<String, ?>> stores;

    /** @param stores the queryable store of a name (Kafka Streams interactive queries, or a test driver's store) */
    public MemoryReader(Function<String, ReadOnlyKeyValueStore<String, ?>> stores) {
        this.stores = stores;
    }

    /** A bounded page of a longer list, with the length of the whole list. */
    public record Page<T>(List<T> items, long total) {
        public Page {
            items = List.copyOf(items);
        }
    }

    /** A surface entity's mention in one passage. */
    public record Mention(String passageId, MentionRecord record) {}

    @SuppressWarnings("unchecked")
    private <V> ReadOnlyKeyValueStore<String, V> store(StoreSpec<V> spec) {
        return (ReadOnlyKeyValueStore<String, V>) stores.apply(spec.name());
    }

    public Optional<NamespaceState> namespace(String ns) {
        return Optional.ofNullable(store(StateStores.MEMORY_NAMESPACES).get(ns));
    }

    public Optional<DocumentRecord> document(String ns, String documentId) {
        return Optional.ofNullable(store(StateStores.MEMORY_DOCUMENTS).get(Keys.of(ns, documentId)));
    }

    public Optional<StoredPassage> passage(String ns, String passageId) {
        return Optional.ofNullable(store(StateStores.MEMORY_PASSAGES).get(Keys.of(ns, passageId)));
    }

    /** What memory records for the mirrors of one object, if it has it. */
    public Optional<MirrorEntry> mirrorEntry(String ns, MirrorRecord.Kind kind, String id) {
        return Optional.ofNullable(store(StateStores.MEMORY_MIRROR).get(MirrorIds.key(ns, kind, id)));
    }

    /**
     * Every object of one kind that memory records for the mirrors, with its entry, in id order: the version an object
     * last changed at, read without decoding the object.
     */
    public void forEachMirrorEntry(String ns, MirrorRecord.Kind kind, BiConsumer<String, MirrorEntry> action) {
        try (KeyValueIterator<String, MirrorEntry> it =
                store(StateStores.MEMORY_MIRROR).prefixScan(MirrorIds.prefix(ns, kind), KEYS)) {
            it.forEachRemaining(kv -> action.accept(Keys.last(kv.key), kv.value));
        }
    }

    /** The passages and surface entities memory changed between two versions of a namespace. */
    public record Changed(Set<String> passages, Set<String> surfaces) {}

    /**
     * What memory changed of the namespace after version {@code from} up to version {@code to}, from its log: empty
     * when the log does not hold every transaction in between (its oldest entries were removed, or memory was written
     * before the log was kept) or one of them changed too much to be listed, and then only a whole read tells what memory
     * holds.
     */
    public Optional<Changed> changed(String ns, long from, long to) {
        if (from > to) {
            return Optional.empty();
        }
        Set<String> passages = new HashSet<>();
        Set<String> surfaces = new HashSet<>();
        long reached = from;
        if (from < to) {
            try (KeyValueIterator<String, MemoryLogEntry> it =
                    store(StateStores.MEMORY_LOG).range(MemoryLogEntry.key(ns, from + 1), MemoryLogEntry.key(ns, to))) {
                while (it.hasNext()) {
                    KeyValue<String, MemoryLogEntry> kv = it.next();
                    if (kv.value == null || kv.value.since() != reached) {
                        return Optional.empty(); // an entry is missing before this one
                    }
                    if (kv.value.whole()) {
                        return Optional.empty(); // too much changed to be listed
                    }
                    passages.addAll(kv.value.passages());
                    surfaces.addAll(kv.value.surfaces());
                    reached = MemoryLogEntry.version(kv.key);
                }
            }
        }
        return reached == to ? Optional.of(new Changed(passages, surfaces)) : Optional.empty();
    }

    /**
     * Up to {@code limit} documents of the namespace in id order, after the id {@code after} (from the first when
     * null), with {@code status} (any when null). A status filter reads past the documents it leaves out, so a page
     * costs up to the namespace's size in the worst case.
     */
    public List<DocumentRecord> documents(String ns, String after, int limit, DocumentStatus status) {
        List<DocumentRecord> out = new ArrayList<>();
        String from = after == null ? Keys.prefix(ns) : Keys.of(ns, after);
        String to = ns + (char) (Keys.SEPARATOR + 1);
        try (KeyValueIterator<String, DocumentRecord> it =
                store(StateStores.MEMORY_DOCUMENTS).range(from, to)) {
            while (it.hasNext() && out.size() < limit) {
                DocumentRecord d = it.next().value;
                if (d == null || (after != null && d.id().equals(after))) {
                    continue;
                }
                if (status == null || d.status() == status) {
                    out.add(d);
                }
            }
        }
        return out;
    }

    /**
     * The {@code limit} most recently updated documents of the namespace (with {@code status}, when given), newest first;
     * ties by id. Scans the namespace's documents once, keeping only {@code limit} of them.
     */
    public List<DocumentRecord> recentDocuments(String ns, int limit, DocumentStatus status) {
        Comparator<DocumentRecord> newestFirst = Comparator.comparing(
                        DocumentRecord::updatedAt, Comparator.nullsLast(Comparator.reverseOrder()))
                .thenComparing(DocumentRecord::id);
        // the kept documents, the oldest of them at the head
        PriorityQueue<DocumentRecord> kept = new PriorityQueue<>(newestFirst.reversed());
        try (KeyValueIterator<String, DocumentRecord> it =
                store(StateStores.MEMORY_DOCUMENTS).range(Keys.prefix(ns), ns + (char) (Keys.SEPARATOR + 1))) {
            while (it.hasNext()) {
                DocumentRecord d = it.next().value;
                if (d == null || (status != null && d.status() != status)) {
                    continue;
                }
                kept.add(d);
                if (kept.size() > limit) {
                    kept.poll();
                }
            }
        }
        List<DocumentRecord> out = new ArrayList<>(kept);
        out.sort(newestFirst);
        return out;
    }

    /** Every passage of the namespace, in passage-id order. */
    public void forEachPassage(String ns, Consumer<StoredPassage> action) {
        try (KeyValueIterator<String, StoredPassage> it =
                store(StateStores.MEMORY_PASSAGES).prefixScan(Keys.prefix(ns), KEYS)) {
            it.forEachRemaining(kv -> action.accept(kv.value));
        }
    }

    /** The passage's own embedding, or null. */
    public float[] passageVector(String ns, String passageId) {
        byte[] v = store(StateStores.MEMORY_VECTORS).get(Keys.of(ns, passageId));
        return v == null ? null : StoredVectors.decode(v);
    }

    /** Every other embedding of the passage (memory, entities, facts, questions), or null. */
    public Embeddings embeddings(String ns, String passageId) {
        return store(StateStores.MEMORY_EMBEDDINGS).get(Keys.of(ns, passageId));
    }

    /** Entities and facts verification rejected, oldest passages first. */
    public Page<ReviewItem> reviews(String ns, int limit) {
        List<ReviewItem> items = new ArrayList<>();
        long total = 0;
        try (KeyValueIterator<String, ReviewItem> it =
                store(StateStores.MEMORY_REVIEWS).prefixScan(Keys.prefix(ns), KEYS)) {
            while (it.hasNext()) {
                ReviewItem r = it.next().value;
                total++;
                if (items.size() < limit) {
                    items.add(r);
                }
            }
        }
        return new Page<>(items, total);
    }

    public Optional<EntityRecord> entity(String ns, String surfaceId) {
        return Optional.ofNullable(store(StateStores.MEMORY_ENTITIES).get(Keys.of(ns, surfaceId)));
    }

    /** Every surface entity of the namespace, in id order. */
    public void forEachEntity(String ns, Consumer<EntityRecord> action) {
        try (KeyValueIterator<String, EntityRecord> it =
                store(StateStores.MEMORY_ENTITIES).prefixScan(Keys.prefix(ns), KEYS)) {
            it.forEachRemaining(kv -> action.accept(kv.value));
        }
    }

    /** Up to {@code limit} surface ids filed under a blocking key (see {@link BlockKeys}). */
    public List<String> block(String ns, String blockKey, int limit) {
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, String> it =
                store(StateStores.MEMORY_ENTITY_INDEX).prefixScan(Keys.prefix(ns, blockKey), KEYS)) {
            while (it.hasNext() && out.size() < limit) {
                out.add(Keys.last(it.next().key));
            }
        }
        return out;
    }

    /**
     * At most {@code limit} passages that mention a surface entity, in passage-id order, after {@code after} (or from
     * the first when null): reads no more of a hub's mentions than the page.
     */
    public List<Mention> mentions(String ns, String surfaceId, String after, int limit) {
        List<Mention> out = new ArrayList<>();
        String prefix = Keys.prefix(ns, surfaceId);
        try (KeyValueIterator<String, MentionRecord> it = after == null
                ? store(StateStores.MEMORY_ENTITY_PASSAGES).prefixScan(prefix, KEYS)
                : store(StateStores.MEMORY_ENTITY_PASSAGES).range(Keys.of(ns, surfaceId, after), null)) {
            while (it.hasNext() && out.size() < limit) {
                KeyValue<String, MentionRecord> kv = it.next();
                if (!kv.key.startsWith(prefix)) {
                    break;
                }
                String passageId = Keys.last(kv.key);
                if (!passageId.equals(after)) {
                    out.add(new Mention(passageId, kv.value));
                }
            }
        }
        return out;
    }

    /** At most {@code limit} resolution decisions about a surface entity. */
    public List<PairDecision> pairs(String ns, String surfaceId, int limit) {
        List<PairDecision> out = new ArrayList<>();
        try (KeyValueIterator<String, PairDecision> it =
                store(StateStores.MEMORY_ENTITY_PAIRS).prefixScan(Keys.prefix(ns, surfaceId), KEYS)) {
            while (it.hasNext() && out.size() < limit) {
                out.add(it.next().value);
            }
        }
        return out;
    }

    /** The resolution decisions about a surface entity and each of its candidates. */
    public List<PairDecision> pairs(String ns, String surfaceId) {
        List<PairDecision> out = new ArrayList<>();
        try (KeyValueIterator<String, PairDecision> it =
                store(StateStores.MEMORY_ENTITY_PAIRS).prefixScan(Keys.prefix(ns, surfaceId), KEYS)) {
            it.forEachRemaining(kv -> out.add(kv.value));
        }
        return out;
    }

    /** Every stored resolution decision of the namespace (each pair in both directions). */
    public void forEachPair(String ns, Consumer<PairDecision> action) {
        try (KeyValueIterator<String, PairDecision> it =
                store(StateStores.MEMORY_ENTITY_PAIRS).prefixScan(Keys.prefix(ns), KEYS)) {
            it.forEachRemaining(kv -> action.accept(kv.value));
        }
    }

    /** The surface ids a resolved entity groups. */
    public List<String> members(String ns, String resolvedId) {
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, String> it =
                store(StateStores.MEMORY_ENTITY_MEMBERS).prefixScan(Keys.prefix(ns, resolvedId), KEYS)) {
            it.forEachRemaining(kv -> out.add(Keys.last(kv.key)));
        }
        return out;
    }

    /** Every resolved entity of the namespace with the surface ids it groups, by resolved id. */
    public Map<String, List<String>> groups(String ns) {
        Map<String, List<String>> groups = new TreeMap<>();
        try (KeyValueIterator<String, String> it =
                store(StateStores.MEMORY_ENTITY_MEMBERS).prefixScan(Keys.prefix(ns), KEYS)) {
            while (it.hasNext()) {
                String[] parts = it.next().key.split(String.valueOf(Keys.SEPARATOR));
                groups.computeIfAbsent(parts[1], k -> new ArrayList<>()).add(parts[2]);
            }
        }
        return groups;
    }

    public Optional<DocumentGist> gist(String ns, String documentId) {
        return Optional.ofNullable(store(StateStores.MEMORY_GISTS).get(Keys.of(ns, documentId)));
    }

    public Optional<ThemeSet> themes(String ns) {
        return Optional.ofNullable(store(StateStores.MEMORY_THEMES).get(ns));
    }
}
