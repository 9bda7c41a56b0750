package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.VectorIndexer;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.ThemeSet;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a namespace's {@link MemoryGraph} from this instance's state stores and keeps it while the namespace does
 * not change: a snapshot is rebuilt when the namespace's memory version has moved on and the snapshot is older than
 * {@code maxStaleness} (and, for a costly build, older than a multiple of what its build took, which bounds the share of
 * a core that rebuilds take while a namespace is written), so a burst of writes does not rebuild it on every query;
 * namespaces whose snapshot is costly to build are rebuilt in the background (see {@link #graph(String, long,
 * Supplier)}).
 */
public final class GraphLoader implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GraphLoader.class);

    private record Cached(MemoryGraph graph, long builtAtNanos, long buildNanos, long bytes) {}

    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();
    /** When each cached namespace was last queried: the least recently used leave first. */
    private final ConcurrentHashMap<String, Long> lastUsed = new ConcurrentHashMap<>();
    /** One build at a time per namespace; a lock, not a monitor, so a waiting virtual thread never pins its carrier. */
    private final ConcurrentHashMap<String, ReentrantLock> locks = new ConcurrentHashMap<>();

    private final Set<String> refreshing = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, HnswVectors> vectors = new ConcurrentHashMap<>();
    private final ExecutorService background = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-snapshots");
        t.setDaemon(true);
        return t;
    });
    /** Writes snapshots' new vectors into the namespaces' HNSW graphs while the snapshots are served. */
    private final ExecutorService indexing = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-vector-index");
        t.setDaemon(true);
        return t;
    });

    private volatile boolean closed;
    private final Meters meters;
    private final long maxStalenessNanos;
    /** How long a snapshot serves per nanosecond its build took, beside {@code maxStaleness} (0: no bound). */
    private final double agePerBuildNanos;

    private final long inlineBuildNanos;
    private final Path indexDir;
    private final VectorSearch search;
    private final long budgetBytes;
    private final long idleNanos;
    /** The model of the query embedder; passages embedded by another are left out of snapshots (null: none are). */
    private final String embedder;
    /** Per namespace, how many passages of another model its last snapshot left out, as last logged. */
    private final Map<String, Long> otherModelLogged = new ConcurrentHashMap<>();

    /**
     * @param indexDir where each namespace's HNSW index is kept (a directory per namespace), or null for memory
     * @param inlineBuildMillis a namespace whose last snapshot took longer than this to build is rebuilt in the
     *     background while queries go on reading the previous snapshot; quicker ones are rebuilt by the query
     */
    public GraphLoader(
            long maxStalenessMillis, long inlineBuildMillis, Path indexDir, VectorSearch search, Meters meters) {
        this(
                maxStalenessMillis,
                inlineBuildMillis,
                indexDir,
                search,
                Long.MAX_VALUE,
                Duration.ofDays(365),
                null,
                1.0,
                meters);
    }

    /**
     * @param budgetBytes the snapshots of all namespaces together stay within about this many bytes: the least
     *     recently queried leave first (the one just built always stays)
     * @param idle a snapshot not queried for this long leaves (its namespace moved to another instance, or is quiet)
     * @param embedder the model id of the embedder that embeds queries: a passage whose vectors another model made
     *     (the namespace was filled before a change of {@code ENGRAM_EMBEDDER}) is left out of the snapshots, as its
     *     vectors are not comparable with the query's, until it is understood again (null: every passage is kept)
     * @param buildShare while a namespace is written, rebuilding its snapshot takes at most about this share of one
     *     core: a snapshot that took {@code b} to build serves for at least {@code b × (1 − share) / share} (1: no
     *     bound beyond {@code maxStaleness})
     */
    public GraphLoader(
            long maxStalenessMillis,
            long inlineBuildMillis,
            Path indexDir,
            VectorSearch search,
            long budgetBytes,
            Duration idle,
            String embedder,
            double buildShare,
            Meters meters) {
        if (!(buildShare > 0 && buildShare <= 1)) {
            throw new IllegalArgumentException("buildShare must be in (0, 1]: " + buildShare);
        }
        this.agePerBuildNanos = (1 - buildShare) / buildShare;
        this.embedder = embedder;
        this.budgetBytes = budgetBytes;
        this.idleNanos = idle.toNanos();
        this.meters = meters;
        this.maxStalenessNanos = maxStalenessMillis * 1_000_000L;
        this.inlineBuildNanos = inlineBuildMillis * 1_000_000L;
        this.indexDir = indexDir;
        this.search = search;
        meters.vectorIndexWaiting(this, GraphLoader::waitingVectors);
    }

    /** Vectors the namespaces' latest snapshots scan beside their graphs while the background writes them. */
    private double waitingVectors() {
        return vectors.values().stream().mapToLong(HnswVectors::waiting).sum();
    }

    /** The namespace's snapshot, built from this instance's stores when it is missing or stale. */
    public MemoryGraph graph(String ns, NamespaceState state, MemoryReader memory) {
        return graph(ns, state.version(), state.updatedAt(), () -> build(ns, state.version(), memory));
    }

    /** {@link #graph(String, long, Instant, Supplier)} for a namespace whose last write time is not known. */
    public MemoryGraph graph(String ns, long version, Supplier<MemoryGraph> build) {
        return graph(ns, version, null, build);
    }

    /**
     * The namespace's snapshot at {@code version} or one at most {@code maxStaleness} older. A snapshot that is cheap
     * to build is rebuilt right away; an expensive one (a large namespace) is rebuilt in the background and the
     * previous one served meanwhile, so a write burst never makes queries wait for a full rebuild. Responses carry
     * the snapshot's {@code graph_version}; passages deleted since are never served (the caller checks the stores).
     *
     * <p>The bound on the share of a core that rebuilds take holds only while the namespace is written: once it has
     * not changed since {@code changedAt} for as long as its last build took (and at least {@code maxStaleness}), a
     * stale snapshot is rebuilt at once, so that answers catch up with the last write within about two build times
     * rather than four or more. Quiet spans of that length allow at most one rebuild each, which keeps rebuilds
     * under half a core whatever the write pattern.
     *
     * @param changedAt when the namespace last changed, by this instance's clock (null: not known, never quiet)
     */
    public MemoryGraph graph(String ns, long version, Instant changedAt, Supplier<MemoryGraph> build) {
        long now = System.nanoTime();
        lastUsed.put(ns, now);
        evictIdle(now);
        Cached c = cache.get(ns);
        if (c != null
                && (c.graph().version() == version
                        || (now - c.builtAtNanos() < servesFor(c) && !quiet(c, changedAt)))) {
            return c.graph();
        }
        if (c != null && c.buildNanos() > inlineBuildNanos) {
            if (refreshing.add(ns)) {
                background.execute(() -> {
                    try {
                        rebuild(ns, version, build, Meters.SnapshotHow.BACKGROUND);
                    } catch (RuntimeException e) {
                        // the stores moved away (a rebalance) or were closed; the next query tries again
                        LOG.warn("rebuilding the snapshot of namespace {} failed: {}", ns, e.toString());
                    } finally {
                        refreshing.remove(ns);
                    }
                });
            }
            return c.graph();
        }
        return rebuild(ns, version, build, Meters.SnapshotHow.INLINE);
    }

    /** How long a snapshot serves while its namespace changes: the staleness bound, longer for a costly build. */
    private long servesFor(Cached c) {
        return Math.max(maxStalenessNanos, (long) (c.buildNanos() * agePerBuildNanos));
    }

    /** Whether the namespace has not changed for as long as its snapshot's last build took. */
    private boolean quiet(Cached c, Instant changedAt) {
        if (changedAt == null) {
            return false;
        }
        long quietNanos = Duration.between(changedAt, Instant.now()).toNanos();
        return quietNanos >= Math.max(maxStalenessNanos, c.buildNanos());
    }

    private MemoryGraph rebuild(String ns, long version, Supplier<MemoryGraph> build, Meters.SnapshotHow how) {
        ReentrantLock lock = locks.computeIfAbsent(ns, n -> new ReentrantLock());
        lock.lock();
        try {
            Cached c = cache.get(ns);
            if (c != null && c.graph().version() >= version) {
                return c.graph(); // another query built it meanwhile
            }
            long t0 = System.nanoTime();
            MemoryGraph g;
            try {
                g = build.get();
            } catch (RuntimeException e) {
                meters.snapshotBuilt(how, false, Duration.ofNanos(System.nanoTime() - t0));
                throw e;
            }
            long now = System.nanoTime();
            meters.snapshotBuilt(how, true, Duration.ofNanos(now - t0));
            if (closed) {
                g.release(); // built while closing: served to this caller only, never cached
                return g;
            }
            Cached previous = cache.put(ns, new Cached(g, now, now - t0, g.estimatedBytes()));
            if (previous != null) {
                previous.graph().release();
            }
            lastUsed.putIfAbsent(ns, now);
            return g;
        } finally {
            lock.unlock();
            // outside this namespace's lock: eviction takes other namespaces' locks, never two at once
            evictOverBudget(ns);
        }
    }

    /** Bytes the cached snapshots hold, about. */
    public long cachedBytes() {
        return cache.values().stream().mapToLong(Cached::bytes).sum();
    }

    /** The namespaces that have a snapshot cached. */
    public Set<String> cachedNamespaces() {
        return Set.copyOf(cache.keySet());
    }

    /** Drops the least recently queried snapshots, but never {@code keep}, until the rest fit the budget. */
    private void evictOverBudget(String keep) {
        while (cachedBytes() > budgetBytes) {
            String victim = cache.keySet().stream()
                    .filter(ns -> !ns.equals(keep))
                    .min(Comparator.comparingLong(ns -> lastUsed.getOrDefault(ns, Long.MIN_VALUE)))
                    .orElse(null);
            if (victim == null) {
                return;
            }
            if (!evict(victim, "budget", true)) {
                return;
            }
        }
    }

    private void evictIdle(long now) {
        for (Map.Entry<String, Long> e : lastUsed.entrySet()) {
            if (now - e.getValue() > idleNanos && cache.containsKey(e.getKey())) {
                evict(e.getKey(), "idle", false);
            }
        }
    }

    /**
     * Releases a namespace's snapshot; queries running on it finish, the next query builds a new one. With
     * {@code onlyOverBudget}, only when the snapshots are still over the budget once the namespace's lock is held (a
     * build may have finished meanwhile); false when nothing was evicted.
     */
    private boolean evict(String ns, String why, boolean onlyOverBudget) {
        ReentrantLock lock = locks.computeIfAbsent(ns, n -> new ReentrantLock());
        lock.lock();
        try {
            if (onlyOverBudget && cachedBytes() <= budgetBytes) {
                return false;
            }
            Cached c = cache.remove(ns);
            lastUsed.remove(ns);
            if (c != null) {
                c.graph().release();
                LOG.debug("snapshot of namespace {} evicted ({}, {} bytes)", ns, why, c.bytes());
            }
            // Its index writer, reader and buffers go too (snapshots still in use keep their own reader); the index
            // stays on disk, and the namespace's next snapshot opens it again and writes only what changed.
            closeVectors(ns);
            return c != null;
        } finally {
            lock.unlock();
        }
    }

    /** The namespace's vector indexes; they outlive snapshots, so each snapshot writes only what changed. */
    HnswVectors vectors(String ns) {
        return vectors.computeIfAbsent(
                ns,
                n -> new HnswVectors(
                        indexDir == null ? null : indexDir.resolve(n),
                        search.minVectors(),
                        search.ef(),
                        search.maxConn(),
                        search.beamWidth(),
                        search.backgroundWrites() ? indexing : null,
                        new HnswVectors.Listener() {
                            @Override
                            public void applied(long written, long deleted) {
                                meters.vectorIndexWrites(written, deleted);
                            }

                            @Override
                            public void failed(Exception e) {
                                meters.vectorIndexWriteFailed();
                                // the next snapshot writes its vectors itself, from the index's last commit
                                LOG.warn("writing the vector index of namespace {} failed: {}", n, e.toString());
                                LOG.debug("writing the vector index of namespace {} failed", n, e);
                            }
                        }));
    }

    /** The namespaces whose vector indexes are open. */
    public Set<String> openVectorIndexes() {
        return Set.copyOf(vectors.keySet());
    }

    private void closeVectors(String ns) {
        HnswVectors v = vectors.remove(ns);
        if (v != null) {
            try {
                v.close();
            } catch (IOException | RuntimeException e) {
                LOG.warn("closing the vector index of namespace {}: {}", ns, e.toString());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        // a background build runs to its end (interrupting it mid-write would break its index's writer)
        background.shutdown();
        try {
            if (!background.awaitTermination(60, TimeUnit.SECONDS)) {
                LOG.warn("a snapshot build is still running at shutdown");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (String ns : cache.keySet()) {
            ReentrantLock lock = locks.computeIfAbsent(ns, n -> new ReentrantLock());
            lock.lock();
            try {
                Cached c = cache.remove(ns);
                if (c != null) {
                    c.graph().release();
                }
            } finally {
                lock.unlock();
            }
        }
        Set.copyOf(vectors.keySet()).forEach(this::closeVectors);
        indexing.shutdown(); // a write still running stops at its next vector when its index closes
    }

    private MemoryGraph build(String ns, long version, MemoryReader memory) {
        Resolved resolved = Resolved.of(ns, memory);
        // names repeat across passages: normalize each once per build
        Map<String, String> normalized = new HashMap<>();
        Function<String, String> normalize = name -> normalized.computeIfAbsent(name, EntityNames::normalize);
        HnswVectors hnsw = vectors(ns);
        MemoryGraph.Builder b = MemoryGraph.builder(version).indexer(batches -> {
            if (closed) {
                return VectorIndexer.EXACT.index(batches); // closing: its indexes are closed or about to be
            }
            try {
                return hnsw.index(batches);
            } catch (RuntimeException e) {
                meters.vectorIndexUnavailable();
                // the index cannot be written (a full disk, a lock held elsewhere): search stays exact meanwhile
                LOG.warn("vector index of namespace {} unavailable, searching exactly: {}", ns, e.toString());
                return VectorIndexer.EXACT.index(batches);
            }
        });
        long[] otherModel = {0};
        memory.forEachPassage(ns, p -> {
            if (embedder != null && p.embedder() != null && !embedder.equals(p.embedder())) {
                otherModel[0]++;
                return;
            }
            float[] vector = memory.passageVector(ns, p.passageId());
            Embeddings emb = memory.embeddings(ns, p.passageId());
            if (vector == null) {
                return; // written between the two reads; the next snapshot has it
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
                    vector);
            Extraction x = p.extraction();
            // Names of this passage's entities → their resolved entity's index in the graph.
            Map<String, Integer> byName = new HashMap<>();
            List<String> surfaceIds = p.surfaceIdsByMention();
            for (int i = 0; i < x.entities().size(); i++) {
                Extraction.Entity e = x.entities().get(i);
                if (surfaceIds.get(i) == null) {
                    continue;
                }
                String canonical = resolved.canonical(surfaceIds.get(i));
                int entity = b.entity(canonical, resolved.name(canonical, e.name()), e.type());
                b.link(entity, index);
                byName.putIfAbsent(normalize.apply(e.name()), entity);
                e.aliases().forEach(a -> byName.putIfAbsent(normalize.apply(a), entity));
                if (emb != null && i < emb.entities().size()) {
                    b.entityVector(entity, emb.entities().get(i));
                }
            }
            for (Extraction.Relation r : x.relations()) {
                int[] members = r.entities().stream()
                        .mapToInt(name -> byName.getOrDefault(normalize.apply(name), -1))
                        .filter(i -> i >= 0)
                        .distinct()
                        .toArray();
                if (members.length >= 2) {
                    b.relation(r.relation() + ": " + String.join(", ", r.entities()), index, members);
                }
            }
            if (emb == null) {
                return;
            }
            b.questions(index, emb.questions());
            for (int f = 0; f < x.facts().size() && f < emb.facts().size(); f++) {
                Extraction.Fact fact = x.facts().get(f);
                b.fact(
                        fact.text(),
                        fact.relation(),
                        index,
                        byName.getOrDefault(normalize.apply(fact.head()), -1),
                        byName.getOrDefault(normalize.apply(fact.tail()), -1),
                        fact.confidence(),
                        emb.facts().get(f));
            }
        });
        Long logged = otherModelLogged.put(ns, otherModel[0]);
        if (otherModel[0] > 0 && (logged == null || logged != otherModel[0])) {
            // snapshots are rebuilt every second or so while a namespace changes: said again only when it changes
            LOG.warn(
                    "namespace {}: {} passages were embedded by another model than {} and are left out of retrieval"
                            + " until their documents are sent again",
                    ns,
                    otherModel[0],
                    embedder);
        }
        memory.themes(ns).ifPresent(themes -> {
            for (ThemeSet.Theme t : themes.themes()) {
                int[] members = t.passageIds().stream()
                        .map(b::passageIndex)
                        .filter(Objects::nonNull)
                        .mapToInt(Integer::intValue)
                        .toArray();
                b.theme(t.rank(), t.eigenvalue(), members, t.summary());
            }
        });
        return b.build();
    }

    /** Surface entity → resolved entity, and each resolved entity's name (its most mentioned surface's). */
    record Resolved(Map<String, String> canonicalOf, Map<String, String> names) {

        static Resolved of(String ns, MemoryReader memory) {
            Map<String, String> canonicalOf = new HashMap<>();
            Map<String, EntityRecord> best = new HashMap<>();
            memory.forEachEntity(ns, e -> {
                canonicalOf.put(e.id(), e.canonical());
                best.merge(e.canonical(), e, (x, y) -> y.mentions() > x.mentions() ? y : x);
            });
            Map<String, String> names = new HashMap<>();
            best.forEach((canonical, e) -> names.put(canonical, e.name()));
            return new Resolved(canonicalOf, names);
        }

        /** The resolved entity of a surface; a surface written after the scan stands for itself. */
        String canonical(String surfaceId) {
            return canonicalOf.getOrDefault(surfaceId, surfaceId);
        }

        String name(String canonical, String fallback) {
            return names.getOrDefault(canonical, fallback);
        }
    }
}
