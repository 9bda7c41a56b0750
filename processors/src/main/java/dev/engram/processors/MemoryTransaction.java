package dev.engram.processors;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.MemoryChange;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryLogEntry;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.PairDecision;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StagedStore;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.ThemeSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * What one input record does to a namespace's memory, all or nothing: every write to the memory stores is staged (reads
 * see the staged writes first) together with the namespace's counters and version and the memory changes made, and
 * it all reaches the stores only when the record succeeded ({@link #commit()}); {@link #abort()} leaves the stores as
 * they were and forgets the changes.
 */
final class MemoryTransaction {

    private final MemoryStores stores;
    private final Supplier<Instant> clock;
    private final StagedStore<DocumentRecord> documents;
    private final StagedStore<StoredPassage> passages;
    private final StagedStore<byte[]> vectors;
    private final StagedStore<Embeddings> embeddings;
    private final StagedStore<ReviewItem> reviews;
    private final StagedStore<EntityRecord> entities;
    private final StagedStore<MentionRecord> mentions;
    private final StagedStore<String> index;
    private final StagedStore<PairDecision> pairs;
    private final StagedStore<String> members;
    private final StagedStore<byte[]> entityVectors;
    private final StagedStore<PairDecision> overrides;
    private final StagedStore<String> passageEntities;
    private final StagedStore<DocumentGist> gists;
    private final StagedStore<ThemeSet> themes;
    private final StagedStore<MirrorEntry> mirror;
    private final StagedStore<MirrorEntry> compensated;
    private final List<StagedStore<?>> staged;
    private final List<MemoryChange> changes = new ArrayList<>();
    /** What happens once the record commits (counting what it did): nothing of an aborted record is counted. */
    private final List<Runnable> afterCommit = new ArrayList<>();

    private NamespaceState state;
    /** The namespace's version when the transaction began. */
    private final long since;
    /** Passages and surface entities whose stored state this transaction changed, for the namespace's log. */
    private final Set<String> changedPassages = new TreeSet<>();

    private final Set<String> changedSurfaces = new TreeSet<>();
    private boolean open = true;

    private MemoryTransaction(MemoryStores stores, NamespaceState state, Supplier<Instant> clock) {
        this.stores = stores;
        this.state = state;
        this.since = state.version();
        this.clock = clock;
        this.documents = new StagedStore<>(stores.documents());
        this.passages = new StagedStore<>(stores.passages());
        this.vectors = new StagedStore<>(stores.vectors());
        this.embeddings = new StagedStore<>(stores.embeddings());
        this.reviews = new StagedStore<>(stores.reviews());
        this.entities = new StagedStore<>(stores.entities(), stores.entityCache());
        this.mentions = new StagedStore<>(stores.mentions());
        this.index = new StagedStore<>(stores.index());
        this.pairs = new StagedStore<>(stores.pairs());
        this.members = new StagedStore<>(stores.members());
        this.entityVectors = new StagedStore<>(stores.entityVectors());
        this.overrides = new StagedStore<>(stores.overrides());
        this.passageEntities = new StagedStore<>(stores.passageEntities());
        this.gists = new StagedStore<>(stores.gists());
        this.themes = new StagedStore<>(stores.themes());
        this.mirror = new StagedStore<>(stores.mirror());
        this.compensated = new StagedStore<>(stores.compensated());
        // the document (its status) is written last: whoever waits for VERIFIED then reads everything it implies
        this.staged = List.of(
                passages,
                vectors,
                embeddings,
                reviews,
                entities,
                mentions,
                index,
                pairs,
                members,
                entityVectors,
                overrides,
                passageEntities,
                gists,
                themes,
                mirror,
                compensated,
                documents);
    }

    /** A transaction over a namespace's memory, starting from its stored state; {@code clock} tells the time. */
    static MemoryTransaction open(MemoryStores stores, String namespace, Supplier<Instant> clock) {
        NamespaceState state = stores.namespaces().get(namespace);
        return new MemoryTransaction(stores, state == null ? NamespaceState.empty(namespace) : state, clock);
    }

    // ---- the namespace ---------------------------------------------------------------------------------------------

    String namespace() {
        return state.namespace();
    }

    /** The namespace's counters and watermark as this record has changed them so far. */
    NamespaceState state() {
        return state;
    }

    void update(UnaryOperator<NamespaceState> change) {
        checkOpen();
        state = change.apply(state);
    }

    /** Adds to the namespace's counters of documents, passages, resolved entities and surface entities. */
    void counts(long documentsDelta, long passagesDelta, long entitiesDelta, long surfacesDelta) {
        update(s -> s.plus(documentsDelta, passagesDelta, entitiesDelta, surfacesDelta));
    }

    /** The version of the next memory change. */
    long nextVersion() {
        update(NamespaceState::nextVersion);
        return state.version();
    }

    Instant now() {
        return clock.get();
    }

    /** Notes, for the namespace's log, that the passage's stored state changed (or that it left). */
    void passageChanged(String passageId) {
        checkOpen();
        changedPassages.add(passageId);
    }

    /** Notes, for the namespace's log, that the surface entity's stored state changed (or that it left). */
    void surfaceChanged(String surfaceId) {
        checkOpen();
        changedSurfaces.add(surfaceId);
    }

    /** Records a memory change, emitted when the record commits. */
    void change(MemoryChange change) {
        checkOpen();
        changes.add(change);
    }

    /** Records an entity-resolution decision about {@code entityId} (and {@code otherId}, or null). */
    void decision(
            MemoryChange.EntityDecision.Kind kind,
            String entityId,
            String otherId,
            String rule,
            double score,
            List<String> evidence) {
        change(new MemoryChange.EntityDecision(
                namespace(), nextVersion(), now(), kind, entityId, otherId, rule, score, evidence));
    }

    /** Runs {@code action} when the record commits, never when it aborts. */
    void onCommit(Runnable action) {
        checkOpen();
        afterCommit.add(action);
    }

    /** The changes made so far, in order. */
    List<MemoryChange> changes() {
        return List.copyOf(changes);
    }

    // ---- the stores ------------------------------------------------------------------------------------------------

    StagedStore<DocumentRecord> documents() {
        return documents;
    }

    StagedStore<StoredPassage> passages() {
        return passages;
    }

    StagedStore<byte[]> vectors() {
        return vectors;
    }

    StagedStore<Embeddings> embeddings() {
        return embeddings;
    }

    StagedStore<ReviewItem> reviews() {
        return reviews;
    }

    StagedStore<EntityRecord> entities() {
        return entities;
    }

    StagedStore<MentionRecord> mentions() {
        return mentions;
    }

    StagedStore<String> index() {
        return index;
    }

    StagedStore<PairDecision> pairs() {
        return pairs;
    }

    StagedStore<String> members() {
        return members;
    }

    StagedStore<byte[]> entityVectors() {
        return entityVectors;
    }

    StagedStore<PairDecision> overrides() {
        return overrides;
    }

    StagedStore<String> passageEntities() {
        return passageEntities;
    }

    StagedStore<DocumentGist> gists() {
        return gists;
    }

    StagedStore<ThemeSet> themes() {
        return themes;
    }

    StagedStore<MirrorEntry> mirror() {
        return mirror;
    }

    StagedStore<MirrorEntry> compensated() {
        return compensated;
    }

    // ---- the end ---------------------------------------------------------------------------------------------------

    /**
     * Writes everything staged and the namespace's state to the stores; returns the changes to emit, in order. The
     * stores are read while the memory step writes them (interactive queries see each write at once), so the order
     * is what a reader can rely on: the namespace's state (its version, which the query snapshot follows) after the
     * graph it describes, and the documents (their status) after both. When the version moved, the namespace's log
     * gets an entry for the new version (after the objects it names, before the state), and loses its entries older
     * than {@link MemoryLogEntry#KEPT_VERSIONS} versions.
     */
    List<MemoryChange> commit() {
        checkOpen();
        open = false;
        staged.stream().filter(s -> s != documents).forEach(StagedStore::commit);
        if (state.version() != since) {
            log();
        }
        stores.namespaces().put(state.namespace(), state);
        documents.commit();
        afterCommit.forEach(Runnable::run);
        return List.copyOf(changes);
    }

    private void log() {
        String ns = namespace();
        long version = state.version();
        stores.log()
                .put(
                        MemoryLogEntry.key(ns, version),
                        MemoryLogEntry.of(since, List.copyOf(changedPassages), List.copyOf(changedSurfaces)));
        // the entries this transaction makes too old: those before were removed by the transactions before it (a scan
        // from the namespace's first version would step over every entry ever removed, until RocksDB compacts them)
        long from = Math.max(0, since - MemoryLogEntry.KEPT_VERSIONS);
        long to = version - MemoryLogEntry.KEPT_VERSIONS - 1;
        if (to < from) {
            return;
        }
        List<String> expired = new ArrayList<>();
        try (KeyValueIterator<String, MemoryLogEntry> it =
                stores.log().range(MemoryLogEntry.key(ns, from), MemoryLogEntry.key(ns, to))) {
            it.forEachRemaining(kv -> expired.add(kv.key));
        }
        expired.forEach(stores.log()::delete);
    }

    /** Forgets everything staged: the stores, the namespace's state and the changes stay as they were. */
    void abort() {
        open = false;
        staged.forEach(StagedStore::abort);
        changes.clear();
        afterCommit.clear();
    }

    private void checkOpen() {
        if (!open) {
            throw new IllegalStateException("the memory transaction of namespace " + namespace() + " has ended");
        }
    }
}
