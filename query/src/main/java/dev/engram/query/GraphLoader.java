package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.TermCache;
import dev.engram.retrieval.VectorIndexer;
import dev.engram.schemas.EntityType;
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
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;
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
 * <p>A build reads from the stores only what changed since the namespace's previous snapshot: the loader keeps every
 * passage's decoded {@link PassagePart} and every surface entity of the previous build, and the namespace's log (written
 * by the memory step with each transaction) names the passages and surfaces changed since. A merge or an unmerge
 * changes the records of the surfaces it moves (their resolved entity), not the passages that mention them, so each
 * build resolves every kept passage's mentions through the surfaces as they are now.
 */
public final class GraphLoader implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GraphLoader.class);

    /** Where a loader reads the time: the system's clocks, or a test's. */
    public interface Ticker {
        /** A monotonic time in nanoseconds, as {@link System#nanoTime()}. */
        long nanoTime();

        /** The wall-clock time, as {@link Instant#now()}: what a namespace's last write time compares with. */
        Instant now();

        Ticker SYSTEM = new Ticker() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public Instant now() {
                return Instant.now();
            }
        };
    }

    /**
     * A namespace's snapshot; not {@code trusted} once memory's stores were restored since it was read: it is served
     * until the next build, which every query then asks for.
     */
    private record Cached(MemoryGraph graph, long builtAtNanos, long buildNanos, long bytes, boolean trusted) {}

    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();
    /** When each cached namespace was last queried: the least recently used leave first. */
    private final ConcurrentHashMap<String, Long> lastUsed = new ConcurrentHashMap<>();
    /** One build at a time per namespace; a lock, not a monitor, so a waiting virtual thread never pins its carrier. */
    private final ConcurrentHashMap<String, ReentrantLock> locks = new ConcurrentHashMap<>();
    /** Snapshots assembled: each build's stamp (see {@link Resolution}). */
    private final AtomicLong builds = new AtomicLong();

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
    /** Moves on each time kept parts are forgotten: a build that began before keeps nothing of what it read. */
    private final AtomicLong keptEpoch = new AtomicLong();

    private final Meters meters;
    private final Ticker ticker;
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
     * How snapshots are built and kept.
     *
     * @param maxStalenessMillis how old a snapshot may be and still be served while memory has moved on
     * @param inlineBuildMillis a namespace whose last snapshot took longer than this to build is rebuilt in the
     *     background while queries go on reading the previous snapshot; quicker ones are rebuilt by the query
     * @param indexDir where each namespace's HNSW index is kept (a directory per namespace), or null for memory
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
    public record Settings(
            long maxStalenessMillis,
            long inlineBuildMillis,
            Path indexDir,
            long budgetBytes,
            Duration idle,
            String embedder,
            double buildShare) {

        public Settings {
            if (!(buildShare > 0 && buildShare <= 1)) {
                throw new IllegalArgumentException("buildShare must be in (0, 1]: " + buildShare);
            }
            Objects.requireNonNull(idle, "idle");
        }

        /** Snapshots in memory, without a budget, an idle time, an embedder to match or a bound on build time. */
        public static Settings of(long maxStalenessMillis, long inlineBuildMillis) {
            return new Settings(
                    maxStalenessMillis, inlineBuildMillis, null, Long.MAX_VALUE, Duration.ofDays(365), null, 1.0);
        }

        public Settings withIndexDir(Path dir) {
            return new Settings(maxStalenessMillis, inlineBuildMillis, dir, budgetBytes, idle, embedder, buildShare);
        }

        public Settings withBudget(long bytes, Duration idleTime) {
            return new Settings(maxStalenessMillis, inlineBuildMillis, indexDir, bytes, idleTime, embedder, buildShare);
        }

        public Settings withEmbedder(String model) {
            return new Settings(maxStalenessMillis, inlineBuildMillis, indexDir, budgetBytes, idle, model, buildShare);
        }

        public Settings withBuildShare(double share) {
            return new Settings(maxStalenessMillis, inlineBuildMillis, indexDir, budgetBytes, idle, embedder, share);
        }
    }

    public GraphLoader(Settings settings, VectorSearch search, Meters meters) {
        this(settings, search, meters, Ticker.SYSTEM);
    }

    /** As above, reading the time from {@code ticker}. */
    public GraphLoader(Settings settings, VectorSearch search, Meters meters, Ticker ticker) {
        this.ticker = ticker;
        this.agePerBuildNanos = (1 - settings.buildShare()) / settings.buildShare();
        this.embedder = settings.embedder();
        this.budgetBytes = settings.budgetBytes();
        this.idleNanos = settings.idle().toNanos();
        this.meters = meters;
        this.maxStalenessNanos = settings.maxStalenessMillis() * 1_000_000L;
        this.inlineBuildNanos = settings.inlineBuildMillis() * 1_000_000L;
        this.indexDir = settings.indexDir();
        this.search = search;
        meters.vectorIndexWaiting(this, GraphLoader::waitingVectors);
    }

    /**
     * Forgets the passages and surfaces every namespace's snapshot kept, so that each next build reads memory whole:
     * memory's stores were rebuilt from their changelogs (after an exactly-once rollback, a store that went missing, or
     * a partition that came to this instance), and what a build read from them before may never have been committed.
     * Snapshots themselves are served until their next build, which the next query asks for whatever their version.
     */
    public void forgetKept() {
        forgetKept(ns -> true);
    }

    /** {@link #forgetKept()} for the namespaces {@code which} accepts. */
    public void forgetKept(Predicate<String> which) {
        keptEpoch.incrementAndGet();
        parts.keySet().removeIf(which);
        for (String ns : cache.keySet()) {
            if (which.test(ns)) {
                cache.computeIfPresent(
                        ns, (k, c) -> new Cached(c.graph(), c.builtAtNanos(), c.buildNanos(), c.bytes(), false));
            }
        }
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
        long now = ticker.nanoTime();
        lastUsed.put(ns, now);
        evictIdle(now);
        Cached c = cache.get(ns);
        if (c != null
                && c.trusted()
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
        long quietNanos = Duration.between(changedAt, ticker.now()).toNanos();
        return quietNanos >= Math.max(maxStalenessNanos, c.buildNanos());
    }

    private MemoryGraph rebuild(String ns, long version, Supplier<MemoryGraph> build, Meters.SnapshotHow how) {
        ReentrantLock lock = locks.computeIfAbsent(ns, n -> new ReentrantLock());
        lock.lock();
        try {
            Cached c = cache.get(ns);
            if (c != null && c.trusted() && c.graph().version() >= version) {
                return c.graph(); // another query built it meanwhile
            }
            long epoch = keptEpoch.get();
            long t0 = ticker.nanoTime();
            MemoryGraph g;
            try {
                g = build.get();
            } catch (RuntimeException e) {
                meters.snapshotBuilt(how, false, Duration.ofNanos(ticker.nanoTime() - t0));
                throw e;
            }
            long now = ticker.nanoTime();
            meters.snapshotBuilt(how, true, Duration.ofNanos(now - t0));
            if (closed) {
                g.release(); // built while closing: served to this caller only, never cached
                return g;
            }
            Parts kept = parts.get(ns);
            long bytes = g.estimatedBytes() + (kept == null ? 0 : extraBytes(kept));
            // built from reads made before a restore of the stores: served, and built again at the next query
            boolean trusted = keptEpoch.get() == epoch;
            Cached previous = cache.put(ns, new Cached(g, now, now - t0, bytes, trusted));
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
                                // a write that failed: the next snapshot writes its vectors itself, from the index's
                                // last commit; an index found unreadable: started again empty (the message says which)
                                LOG.warn("vector index of namespace {}: {}", n, e.toString());
                                LOG.debug("vector index of namespace {}", n, e);
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
     * The parts of a namespace's passages as its last snapshot read them, by passage id in id order (the order of the
     * passages store), its surface entities, and the version they hold memory at. Only the build of the namespace,
     * under its lock, reads and changes them; a build that fails drops them.
     */
    private record Parts(long version, TreeMap<String, Kept> byId, Surfaces surfaces, TermCache terms) {}

    /**
     * A passage's part, and the slot of each of its mentions' surfaces (in the order of its mentions): what a build
     * resolves a mention by without looking its surface up.
     */
    private record Kept(PassagePart part, Surfaces.Slot[] slots) {

        static Kept of(PassagePart part, Surfaces surfaces) {
            Surfaces.Slot[] slots = new Surfaces.Slot[part.mentions().size()];
            for (int i = 0; i < slots.length; i++) {
                slots[i] = surfaces.slot(part.mentions().get(i).surfaceId());
            }
            return new Kept(part, slots);
        }
    }

    /**
     * A build reads every passage and surface when nothing is kept, or when the namespace's log does not reach back to
     * the kept version; otherwise it reads only the passages and surfaces the log says changed since.
     */
    private MemoryGraph build(String ns, NamespaceState state, MemoryReader memory) {
        long epoch = keptEpoch.get();
        // the version as memory holds it now, read after the epoch: lower than the caller's when memory was rolled back
        // since (the caller read a transaction's state before it was aborted), and then what is read is that older one
        long version = memory.namespace(ns).map(NamespaceState::version).orElse(state.version());
        Parts last = parts.get(ns);
        if (last != null && last.version() > version) {
            last = null; // memory went back (its stores were restored to an earlier point): nothing kept is trusted
        }
        if (last != null && last.surfaces().outgrown()) {
            last = null; // slots of surfaces long gone: start afresh
        }
        MemoryReader.Changed changed = last == null
                ? null
                : memory.changed(ns, last.version(), version).orElse(null);
        // names repeat across passages: normalize each once per build
        Map<String, String> normalized = new HashMap<>();
        Function<String, String> normalize = name -> normalized.computeIfAbsent(name, EntityNames::normalize);
        long read = 0;
        Parts next;
        try {
            if (changed != null) {
                // what is read is at least as new as the log says: a write under way is read again at the next build
                Surfaces surfaces = last.surfaces();
                for (String id : changed.passages()) {
                    last.byId().remove(id);
                    PassagePart part = memory.passage(ns, id)
                            .map(p -> read(ns, p, version, memory, normalize))
                            .orElse(null);
                    if (part != null) {
                        last.byId().put(id, Kept.of(part, surfaces));
                        read += part.passage() == null ? 0 : 1;
                    }
                }
                surfaces.update(ns, changed.surfaces(), memory);
                next = new Parts(version, last.byId(), surfaces, last.terms());
            } else {
                TreeMap<String, Kept> byId = new TreeMap<>();
                Surfaces surfaces = Surfaces.read(ns, memory);
                long[] whole = {0};
                memory.forEachPassage(ns, p -> {
                    PassagePart part = read(ns, p, version, memory, normalize);
                    if (part != null) {
                        byId.put(p.passageId(), Kept.of(part, surfaces));
                        whole[0] += part.passage() == null ? 0 : 1;
                    }
                });
                read = whole[0];
                next = new Parts(version, byId, surfaces, last == null ? new TermCache() : last.terms());
            }
        } catch (RuntimeException e) {
            parts.remove(ns); // changed part of the way: not to be trusted
            throw e;
        }
        List<Kept> ordered = new ArrayList<>(next.byId().values());
        MemoryGraph g;
        try {
            g = assemble(ns, version, ordered, next.terms(), memory);
        } catch (RuntimeException e) {
            parts.remove(ns);
            throw e;
        }
        long inSnapshot =
                ordered.stream().filter(k -> k.part().passage() != null).count();
        meters.snapshotPassages(read, inSnapshot - read);
        if (!closed && keptEpoch.get() == epoch) {
            parts.put(ns, next);
            if (keptEpoch.get() != epoch) {
                parts.remove(ns); // forgotten meanwhile
            }
        }
        return g;
    }

    /** Heap the kept parts of a namespace hold beyond its snapshot, about. */
    private static long extraBytes(Parts kept) {
        long extra = 160L * kept.surfaces().size() + kept.terms().bytes();
        for (Kept k : kept.byId().values()) {
            extra += k.part().extraBytes() + 8L * k.slots().length;
        }
        return extra;
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

    /** The entities of a relation's members, by their names in the passage: each once, in order, the unknown left out. */
    private static int[] members(List<String> keys, Map<String, Integer> byName) {
        int[] out = new int[keys.size()];
        int n = 0;
        for (String key : keys) {
            int e = byName.getOrDefault(key, -1);
            boolean seen = e < 0;
            for (int i = 0; i < n && !seen; i++) {
                seen = out[i] == e;
            }
            if (!seen) {
                out[n++] = e;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** A snapshot of the passages' parts, with each surface resolved as memory resolves it now. */
    private MemoryGraph assemble(String ns, long version, List<Kept> ordered, TermCache terms, MemoryReader memory) {
        long build = builds.incrementAndGet();
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
        for (Kept kept : ordered) {
            PassagePart part = kept.part();
            if (otherModel(part.embedder())) {
                otherModel++;
                continue;
            }
            int index = b.passage(part.passage(), part.vector());
            if (part.session() != null) {
                b.session(index, part.session(), part.time());
            }
            if (part.time() != Long.MIN_VALUE) {
                b.time(index, part.time());
            }
            // Names of this passage's entities → their resolved entity's index in the graph.
            Map<String, Integer> byName = new HashMap<>();
            List<PassagePart.Mention> mentions = part.mentions();
            for (int i = 0; i < mentions.size(); i++) {
                PassagePart.Mention m = mentions.get(i);
                Resolution r = kept.slots()[i].resolution;
                if (r == null) {
                    r = new Resolution(m.surfaceId(), m.name()); // a surface written since stands for itself
                }
                int entity = r.entity(b, build, m.type());
                b.link(entity, index);
                m.keys().forEach(k -> byName.putIfAbsent(k, entity));
                if (m.vector() != null) {
                    b.entityVector(entity, m.vector());
                }
            }
            for (PassagePart.Relation r : part.relations()) {
                int[] members = members(r.memberKeys(), byName);
                if (members.length >= 2) {
                    b.relation(r.text(), index, members);
                }
            }
            if (part.questions() == null) {
                continue;
            }
            b.questions(index, part.questions(), part.questionKeys());
            for (PassagePart.Fact f : part.facts()) {
                b.fact(
                        f.text(),
                        f.relation(),
                        index,
                        byName.getOrDefault(f.headKey(), -1),
                        byName.getOrDefault(f.tailKey(), -1),
                        f.confidence(),
                        f.vector(),
                        f.key());
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

    /** What a snapshot needs of one surface entity: its resolved entity, its mentions and its name. */
    private record Surface(String canonical, int mentions, String name) {

        static Surface of(EntityRecord e) {
            return new Surface(e.canonical(), e.mentions(), e.name());
        }
    }

    /** The resolved entity of a surface, and that entity's name (its most mentioned surface's). */
    private static final class Resolution {
        final String canonical;
        final String name;
        /**
         * The build that last declared the entity and its index there: a build declares each resolved entity once,
         * and its other mentions take the index from here instead of a lookup by id. Only the namespace's build reads
         * and writes them, under its lock.
         */
        private long build;

        private int entity;

        Resolution(String canonical, String name) {
            this.canonical = canonical;
            this.name = name;
        }

        /** The entity's index in the snapshot of build {@code build}, declared there if not yet. */
        int entity(MemoryGraph.Builder b, long build, EntityType type) {
            if (this.build != build) {
                entity = b.entity(canonical, name, type);
                this.build = build;
            }
            return entity;
        }
    }

    /**
     * A namespace's surface entities as memory resolves them, kept from build to build: a build reads again only the
     * surfaces that changed, and names again only the resolved entities they left or joined.
     */
    private static final class Surfaces {

        private final Map<String, Surface> byId = new HashMap<>();
        /** Resolved entity → its surfaces, in id order: the first of equally mentioned surfaces names the entity. */
        private final Map<String, TreeSet<String>> members = new HashMap<>();

        private final Map<String, Resolution> byCanonical = new HashMap<>();

        /**
         * Per surface id any kept passage mentions, its resolution as it is now (null: no such surface), kept up to
         * date as surfaces change, so that a build resolves a mention without a lookup. A surface that leaves keeps
         * its slot (a kept passage may hold it) until the surfaces start afresh.
         */
        private final Map<String, Slot> slots = new HashMap<>();

        /** Where a mention finds its surface's resolution. Only the namespace's build reads and writes it. */
        static final class Slot {
            Resolution resolution;
        }

        /** The slot of a surface id, made when first asked for. */
        Slot slot(String surfaceId) {
            return slots.computeIfAbsent(surfaceId, id -> {
                Slot slot = new Slot();
                Surface s = byId.get(id);
                slot.resolution = s == null ? null : byCanonical.get(s.canonical());
                return slot;
            });
        }

        /** Whether slots of surfaces that left outnumber the surfaces: then the loader reads the namespace afresh. */
        boolean outgrown() {
            return slots.size() > 2L * byId.size() + 50_000;
        }

        /** Every surface of the namespace. */
        static Surfaces read(String ns, MemoryReader memory) {
            Surfaces out = new Surfaces();
            memory.forEachEntity(ns, e -> out.add(e.id(), Surface.of(e)));
            Set.copyOf(out.members.keySet()).forEach(out::name);
            return out;
        }

        /** Reads the surfaces {@code ids} again (those no longer in memory leave). */
        void update(String ns, Set<String> ids, MemoryReader memory) {
            Set<String> touched = new HashSet<>();
            for (String id : ids) {
                Surface old = byId.remove(id);
                if (old != null) {
                    members.get(old.canonical()).remove(id);
                    touched.add(old.canonical());
                }
                Slot slot = slots.get(id);
                if (slot != null) {
                    slot.resolution = null; // until it is read again below, or for good when it left
                }
                memory.entity(ns, id).ifPresent(e -> {
                    Surface now = Surface.of(e);
                    add(id, now);
                    touched.add(now.canonical());
                });
            }
            touched.forEach(this::name);
        }

        private void add(String id, Surface s) {
            byId.put(id, s);
            members.computeIfAbsent(s.canonical(), c -> new TreeSet<>()).add(id);
        }

        /** Names a resolved entity after its most mentioned surface (the first in id order of equally mentioned). */
        private void name(String canonical) {
            TreeSet<String> ids = members.get(canonical);
            if (ids == null || ids.isEmpty()) {
                members.remove(canonical);
                byCanonical.remove(canonical);
                return;
            }
            Surface best = null;
            for (String id : ids) {
                Surface s = byId.get(id);
                if (best == null || s.mentions() > best.mentions()) {
                    best = s;
                }
            }
            Resolution r = new Resolution(canonical, best.name());
            byCanonical.put(canonical, r);
            for (String id : ids) {
                Slot slot = slots.get(id);
                if (slot != null) {
                    slot.resolution = r;
                }
            }
        }

        int size() {
            return byId.size();
        }
    }
}
