package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.TermCache;
import dev.engram.retrieval.VectorIndexer;
import dev.engram.schemas.MirrorRecord;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.ThemeSet;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
 *
 * <p>A build reads from the stores only the passages that changed since the namespace's previous snapshot: memory
 * records the version each passage last changed at (its mirror entry), and the loader keeps every passage's decoded
 * {@link PassagePart} with the version it was read at. Surface entities are kept the same way: a merge or an unmerge
 * changes the records of the surfaces it moves (their resolved entity), not the passages that mention them, so each
 * build resolves every kept passage's mentions through the surfaces as they are now.
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
    private final ConcurrentHashMap<String, Parts> parts = new ConcurrentHashMap<>();
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
        return graph(ns, state.version(), state.updatedAt(), () -> build(ns, state, memory));
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
            Parts kept = parts.get(ns);
            long bytes = g.estimatedBytes() + (kept == null ? 0 : kept.extraBytes());
            Cached previous = cache.put(ns, new Cached(g, now, now - t0, bytes));
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
            parts.remove(ns);
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
                parts.remove(ns);
                if (c != null) {
                    c.graph().release();
                }
            } finally {
                lock.unlock();
            }
        }
        Set.copyOf(vectors.keySet()).forEach(this::closeVectors);
        parts.clear(); // a build that ended while closing may have kept its parts
        indexing.shutdown(); // a write still running stops at its next vector when its index closes
    }

    /**
     * The parts of a namespace's passages as its last snapshot read them, by passage id, and the snapshot's version.
     * Only the build of the namespace, under its lock, reads and replaces them.
     */
    private record Parts(
            long version,
            Map<String, PassagePart> byId,
            Map<String, Surface> surfaces,
            TermCache terms,
            boolean complete,
            long extraBytes) {}

    /**
     * A build reads every passage and surface when nothing is kept, or when the last such read found some without a
     * recorded version (memory written before the versions were recorded): those are found only by a full read. Once
     * one finds every object versioned, the next builds read only what the versions say changed.
     */
    private MemoryGraph build(String ns, NamespaceState state, MemoryReader memory) {
        long version = state.version();
        Parts last = parts.get(ns);
        if (last != null && last.version() > version) {
            last = null; // memory went back (its stores were restored to an earlier point): nothing kept is trusted
        }
        boolean incremental = last != null && last.complete();
        Map<String, PassagePart> kept = incremental ? last.byId() : Map.of();
        Resolved resolved = Resolved.of(ns, incremental ? last.surfaces() : null, memory);
        // names repeat across passages: normalize each once per build
        Map<String, String> normalized = new HashMap<>();
        Function<String, String> normalize = name -> normalized.computeIfAbsent(name, EntityNames::normalize);
        // Each passage's version, read before the passage itself: what is read is at least that new, so a part is
        // kept only as long as it is at least as new as memory says the passage is.
        Map<String, Long> versions = new LinkedHashMap<>();
        memory.forEachMirrorEntry(ns, MirrorRecord.Kind.PASSAGE, (id, e) -> versions.put(id, e.version()));
        List<PassagePart> ordered = new ArrayList<>(versions.size());
        Map<String, PassagePart> next = HashMap.newHashMap(versions.size());
        // passages put into the snapshot read from the stores, and kept; passages read without a version
        long[] counts = {0, 0, 0};
        if (incremental) {
            versions.forEach((id, v) -> {
                PassagePart part = kept.get(id);
                if (part != null && part.version() == v) {
                    counts[1] += part.passage() == null ? 0 : 1;
                    ordered.add(part);
                    next.put(id, part);
                    return;
                }
                memory.passage(ns, id).ifPresent(p -> {
                    PassagePart read = read(ns, p, v, memory, normalize);
                    if (read != null) {
                        counts[0] += read.passage() == null ? 0 : 1;
                        ordered.add(read);
                        next.put(id, read);
                    }
                });
            });
        } else {
            memory.forEachPassage(ns, p -> {
                Long v = versions.get(p.passageId());
                PassagePart read = read(ns, p, v == null ? -1 : v, memory, normalize);
                if (read != null) {
                    counts[0] += read.passage() == null ? 0 : 1;
                    ordered.add(read);
                    if (v == null) {
                        counts[2]++;
                    } else {
                        next.put(p.passageId(), read);
                    }
                }
            });
        }
        TermCache terms = last == null ? new TermCache() : last.terms();
        MemoryGraph g = assemble(ns, version, ordered, resolved, terms, memory);
        meters.snapshotPassages(counts[0], counts[1]);
        if (!closed) {
            long extra = 0;
            for (PassagePart part : next.values()) {
                extra += part.extraBytes();
            }
            extra += 64L * resolved.surfaces().size() + terms.bytes();
            boolean complete = incremental || (counts[2] == 0 && resolved.complete());
            parts.put(ns, new Parts(version, next, resolved.surfaces(), terms, complete, extra));
        }
        return g;
    }

    /**
     * The part of a passage read from the stores; null when its vector is not there (written since, or deleted). A
     * passage another model embedded is left out of snapshots: its part holds only its version and model.
     */
    private PassagePart read(
            String ns, StoredPassage p, long version, MemoryReader memory, Function<String, String> normalize) {
        if (otherModel(p.embedder())) {
            return PassagePart.otherModel(version, p.embedder());
        }
        float[] vector = memory.passageVector(ns, p.passageId());
        if (vector == null) {
            return null; // written between the two reads; the next snapshot has it
        }
        return PassagePart.of(version, p, vector, memory.embeddings(ns, p.passageId()), normalize);
    }

    /** Whether vectors of {@code model} are not comparable with the query's (null: not known, taken as comparable). */
    private boolean otherModel(String model) {
        return embedder != null && model != null && !embedder.equals(model);
    }

    /** A snapshot of the passages' parts, with each surface resolved as memory resolves it now. */
    private MemoryGraph assemble(
            String ns,
            long version,
            List<PassagePart> ordered,
            Resolved resolved,
            TermCache terms,
            MemoryReader memory) {
        HnswVectors hnsw = vectors(ns);
        MemoryGraph.Builder b = MemoryGraph.builder(version).terms(terms).indexer(batches -> {
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
        long otherModel = 0;
        for (PassagePart part : ordered) {
            if (otherModel(part.embedder())) {
                otherModel++;
                continue;
            }
            int index = b.passage(part.passage(), part.vector());
            // Names of this passage's entities → their resolved entity's index in the graph.
            Map<String, Integer> byName = new HashMap<>();
            for (PassagePart.Mention m : part.mentions()) {
                Resolution r = resolved.of(m.surfaceId(), m.name());
                int entity = b.entity(r.canonical(), r.name(), m.type());
                b.link(entity, index);
                m.keys().forEach(k -> byName.putIfAbsent(k, entity));
                if (m.vector() != null) {
                    b.entityVector(entity, m.vector());
                }
            }
            for (PassagePart.Relation r : part.relations()) {
                int[] members = r.memberKeys().stream()
                        .mapToInt(key -> byName.getOrDefault(key, -1))
                        .filter(i -> i >= 0)
                        .distinct()
                        .toArray();
                if (members.length >= 2) {
                    b.relation(r.text(), index, members);
                }
            }
            if (part.questions() == null) {
                continue;
            }
            b.questions(index, part.questions());
            for (PassagePart.Fact f : part.facts()) {
                b.fact(
                        f.text(),
                        f.relation(),
                        index,
                        byName.getOrDefault(f.headKey(), -1),
                        byName.getOrDefault(f.tailKey(), -1),
                        f.confidence(),
                        f.vector());
            }
        }
        Long logged = otherModelLogged.put(ns, otherModel);
        if (otherModel > 0 && (logged == null || logged != otherModel)) {
            // snapshots are rebuilt every second or so while a namespace changes: said again only when it changes
            LOG.warn(
                    "namespace {}: {} passages were embedded by another model than {} and are left out of retrieval"
                            + " until their documents are sent again",
                    ns,
                    otherModel,
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

    /** What a snapshot needs of one surface entity, as read at {@code version}: its resolved entity and its name. */
    private record Surface(long version, String canonical, int mentions, String name) {

        static Surface of(long version, EntityRecord e) {
            return new Surface(version, e.canonical(), e.mentions(), e.name());
        }
    }

    /** The resolved entity of a surface, and that entity's name (its most mentioned surface's). */
    private record Resolution(String canonical, String name) {}

    /**
     * Surface entity → its resolution, and the surfaces as read (what the next build keeps). Like passages, surfaces
     * are read from the stores only when memory's version of them moved since the last build.
     */
    private record Resolved(Map<String, Resolution> bySurface, Map<String, Surface> surfaces, boolean complete) {

        /**
         * @param kept the surfaces as the last build read them, to read only those whose version moved since; null to
         *     read every surface (then {@link #complete} says whether each had a version)
         */
        static Resolved of(String ns, Map<String, Surface> kept, MemoryReader memory) {
            // in id order, as the entities store holds them: the first of equally mentioned surfaces names the entity
            Map<String, Surface> surfaces = new LinkedHashMap<>();
            Map<String, Long> versions = new LinkedHashMap<>();
            memory.forEachMirrorEntry(ns, MirrorRecord.Kind.ENTITY, (id, e) -> versions.put(id, e.version()));
            boolean[] complete = {true};
            if (kept != null) {
                versions.forEach((id, v) -> {
                    Surface s = kept.get(id);
                    if (s != null && s.version() == v) {
                        surfaces.put(id, s);
                    } else {
                        memory.entity(ns, id).ifPresent(e -> surfaces.put(id, Surface.of(v, e)));
                    }
                });
            } else {
                memory.forEachEntity(ns, e -> {
                    Long v = versions.get(e.id());
                    complete[0] &= v != null;
                    surfaces.put(e.id(), Surface.of(v == null ? -1 : v, e));
                });
            }
            Map<String, Surface> best = new HashMap<>();
            surfaces.values().forEach(e -> best.merge(e.canonical(), e, (x, y) -> y.mentions() > x.mentions() ? y : x));
            Map<String, Resolution> bySurface = HashMap.newHashMap(surfaces.size());
            Map<String, Resolution> byCanonical = new HashMap<>();
            surfaces.forEach((id, e) -> bySurface.put(
                    id,
                    byCanonical.computeIfAbsent(
                            e.canonical(), c -> new Resolution(c, best.get(c).name()))));
            Map<String, Surface> keep = HashMap.newHashMap(surfaces.size());
            surfaces.forEach((id, e) -> {
                if (e.version() >= 0) {
                    keep.put(id, e);
                }
            });
            return new Resolved(bySurface, keep, complete[0]);
        }

        /** The resolution of a surface; one written after the scan stands for itself, named as mentioned. */
        Resolution of(String surfaceId, String mentioned) {
            Resolution r = bySurface.get(surfaceId);
            return r != null ? r : new Resolution(surfaceId, mentioned);
        }
    }
}
