package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;
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

    private final Set<String> refreshing = ConcurrentHashMap.newKeySet();
    private final ExecutorService background = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-snapshots");
        t.setDaemon(true);
        return t;
    });

    /** Namespaces whose recent layer is read again in the background. */
    private final Set<String> refreshingRecent = ConcurrentHashMap.newKeySet();

    /** Reads recent layers again, apart from the whole builds, which take far longer. */
    private final ExecutorService recentReader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-recent-layers");
        t.setDaemon(true);
        return t;
    });

    private volatile boolean closed;

    private final Meters meters;
    private final Ticker ticker;
    private final long maxStalenessNanos;
    /** How long a snapshot serves per nanosecond its build took, beside {@code maxStaleness} (0: no bound). */
    private final double agePerBuildNanos;

    private final long inlineBuildNanos;
    /** The most passages changed since a namespace's snapshot that its recent layer takes (0: no recent layers). */
    private final int recentPassages;

    /**
     * A recent layer as read from the stores: a snapshot of the passages memory changed after a version, and the ids of
     * every passage changed since (those it holds, and those that left or cannot be in a snapshot: a whole snapshot
     * of the earlier version may hold them, as they were).
     */
    public record RecentRead(MemoryGraph graph, Set<String> changed) {}

    /**
     * A namespace's recent layer beside {@code base}: {@code read} is null when too many passages changed since or the
     * log did not reach back; read when memory was at {@code version}. {@code shadowed} counts the passages of the base
     * it changed, and {@code bytes} is about what it holds.
     */
    private record Recent(
            MemoryGraph base, RecentRead read, long version, long builtAtNanos, int shadowed, long bytes) {

        Layers layers() {
            return read == null
                    ? new Layers(base, null, Set.of(), 0)
                    : new Layers(base, read.graph(), read.changed(), shadowed);
        }
    }

    private final ConcurrentHashMap<String, Recent> recents = new ConcurrentHashMap<>();
    /** One recent layer built at a time per namespace, apart from its whole builds. */
    private final ConcurrentHashMap<String, ReentrantLock> recentLocks = new ConcurrentHashMap<>();

    private final long budgetBytes;
    private final long idleNanos;
    /** The namespaces' vector indexes, which outlive their snapshots. */
    private final VectorIndexes vectors;
    /** Assembles snapshots from the stores, keeping what each read for the next. */
    private final SnapshotAssembler assembler;

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
     * @param compactBytes a namespace's snapshot vectors (kept off the heap, in an arena: see {@code VectorArena}) are
     *     copied into a new arena once most of them are no longer used and they take at least this many bytes
     * @param recentPassages while a namespace's costly snapshot is rebuilt in the background, queries also read a
     *     small snapshot of the passages written since it, as long as there are at most this many (0: never; see
     *     {@link #layers(String, NamespaceState, MemoryReader)})
     */
    public record Settings(
            long maxStalenessMillis,
            long inlineBuildMillis,
            Path indexDir,
            long budgetBytes,
            Duration idle,
            String embedder,
            double buildShare,
            long compactBytes,
            int recentPassages) {

        /** The default of {@code compactBytes}: a namespace's vectors are not compacted below 16 MiB. */
        public static final long COMPACT_BYTES = 16L << 20;

        /** The default of {@code recentPassages}. */
        public static final int RECENT_PASSAGES = 5_000;

        public Settings {
            if (!(buildShare > 0 && buildShare <= 1)) {
                throw new IllegalArgumentException("buildShare must be in (0, 1]: " + buildShare);
            }
            Objects.requireNonNull(idle, "idle");
            if (compactBytes < 0) {
                throw new IllegalArgumentException("compactBytes must not be negative: " + compactBytes);
            }
            if (recentPassages < 0) {
                throw new IllegalArgumentException("recentPassages must not be negative: " + recentPassages);
            }
        }

        /** Snapshots in memory, without a budget, an idle time, an embedder to match or a bound on build time. */
        public static Settings of(long maxStalenessMillis, long inlineBuildMillis) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    null,
                    Long.MAX_VALUE,
                    Duration.ofDays(365),
                    null,
                    1.0,
                    COMPACT_BYTES,
                    RECENT_PASSAGES);
        }

        public Settings withIndexDir(Path dir) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    dir,
                    budgetBytes,
                    idle,
                    embedder,
                    buildShare,
                    compactBytes,
                    recentPassages);
        }

        public Settings withBudget(long bytes, Duration idleTime) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    indexDir,
                    bytes,
                    idleTime,
                    embedder,
                    buildShare,
                    compactBytes,
                    recentPassages);
        }

        public Settings withEmbedder(String model) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    indexDir,
                    budgetBytes,
                    idle,
                    model,
                    buildShare,
                    compactBytes,
                    recentPassages);
        }

        public Settings withBuildShare(double share) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    indexDir,
                    budgetBytes,
                    idle,
                    embedder,
                    share,
                    compactBytes,
                    recentPassages);
        }

        public Settings withRecentPassages(int passages) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    indexDir,
                    budgetBytes,
                    idle,
                    embedder,
                    buildShare,
                    compactBytes,
                    passages);
        }

        public Settings withCompaction(long bytes) {
            return new Settings(
                    maxStalenessMillis,
                    inlineBuildMillis,
                    indexDir,
                    budgetBytes,
                    idle,
                    embedder,
                    buildShare,
                    bytes,
                    recentPassages);
        }
    }

    public GraphLoader(Settings settings, VectorSearch search, Meters meters) {
        this(settings, search, meters, Ticker.SYSTEM);
    }

    /** As above, reading the time from {@code ticker}. */
    public GraphLoader(Settings settings, VectorSearch search, Meters meters, Ticker ticker) {
        this.ticker = ticker;
        this.agePerBuildNanos = (1 - settings.buildShare()) / settings.buildShare();
        this.budgetBytes = settings.budgetBytes();
        this.idleNanos = settings.idle().toNanos();
        this.meters = meters;
        this.maxStalenessNanos = settings.maxStalenessMillis() * 1_000_000L;
        this.inlineBuildNanos = settings.inlineBuildMillis() * 1_000_000L;
        this.recentPassages = settings.recentPassages();
        this.vectors = new VectorIndexes(settings.indexDir(), search, meters);
        this.assembler =
                new SnapshotAssembler(settings.embedder(), settings.compactBytes(), vectors, meters, () -> closed);
        meters.vectorIndexWaiting(this, GraphLoader::waitingVectors);
        meters.snapshotVectorArena(assembler, SnapshotAssembler::arenaBytes);
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
        assembler.forget(which);
        for (String ns : recents.keySet()) {
            if (which.test(ns)) {
                dropRecent(ns);
            }
        }
        for (String ns : cache.keySet()) {
            if (which.test(ns)) {
                cache.computeIfPresent(
                        ns, (k, c) -> new Cached(c.graph(), c.builtAtNanos(), c.buildNanos(), c.bytes(), false));
            }
        }
    }

    /** Vectors the namespaces' latest snapshots scan beside their graphs while the background writes them. */
    private double waitingVectors() {
        return vectors.waiting();
    }

    /** The namespace's snapshot, built from this instance's stores when it is missing or stale. */
    public MemoryGraph graph(String ns, NamespaceState state, MemoryReader memory) {
        return graph(ns, state.version(), state.updatedAt(), () -> assembler.build(ns, state, memory));
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

    /**
     * What a query of the namespace reads: its snapshot, and while a costly snapshot (one rebuilt in the background) is
     * behind memory, a recent layer of the passages written since (null: none), with the ids of the passages changed
     * since the snapshot ({@code changed}; the snapshot's copies of them are not to be served) and how many of them the
     * snapshot holds ({@code shadowed}).
     */
    public record Layers(MemoryGraph base, MemoryGraph recent, Set<String> changed, int shadowed) {

        /** The snapshot alone. */
        public Layers(MemoryGraph base) {
            this(base, null, Set.of(), 0);
        }

        /** The memory version the layers hold together. */
        public long version() {
            return recent != null ? recent.version() : base.version();
        }
    }

    /**
     * The namespace's snapshot as {@link #graph(String, NamespaceState, MemoryReader)} gives it, and, while that
     * snapshot is costly to build and behind memory, a recent layer: a snapshot of only the passages memory changed
     * since, read from the stores in time proportional to them: the first beside a snapshot by the query that asks for
     * it, then again in the background once it is {@code maxStaleness} old and memory has moved on, the last one
     * serving meanwhile. Answers then hold a write within about {@code maxStaleness} and a recent layer's read of it at
     * any size of namespace, while the whole snapshot, which the modes that rank by links need to see a new
     * passage's links to the rest, follows at the pace its build allows (see {@link dev.engram.retrieval.RecentLayer}
     * for how the two are ranked as one).
     */
    public Layers layers(String ns, NamespaceState state, MemoryReader memory) {
        return layers(
                ns,
                state.version(),
                state.updatedAt(),
                () -> assembler.build(ns, state, memory),
                since -> assembler.recent(ns, since, state.version(), memory, recentPassages));
    }

    /**
     * {@link #layers(String, NamespaceState, MemoryReader)} with the builds given: {@code build} of the whole
     * snapshot, {@code recentSince} of the recent layer after a version (null: none can be had).
     */
    public Layers layers(
            String ns,
            long version,
            Instant changedAt,
            Supplier<MemoryGraph> build,
            LongFunction<RecentRead> recentSince) {
        MemoryGraph base = graph(ns, version, changedAt, build);
        Cached c = cache.get(ns);
        if (base.version() >= version) {
            dropRecent(ns);
            return new Layers(base);
        }
        if (recentPassages == 0
                || c == null
                || c.graph() != base
                || !c.trusted()
                || c.buildNanos() <= inlineBuildNanos) {
            // a cheap snapshot is rebuilt at once; one read before memory was restored says nothing of what changed
            // since
            return new Layers(base);
        }
        Recent r = recents.get(ns);
        if (current(r, base, version)) {
            return r.layers();
        }
        if (r != null && r.base() == base) {
            // read again in the background, the last one serving meanwhile: no query waits for it
            if (refreshingRecent.add(ns)) {
                try {
                    recentReader.execute(() -> {
                        try {
                            readRecent(ns, base, version, recentSince);
                        } catch (RuntimeException e) {
                            // the stores moved away (a rebalance) or were closed; the next query tries again
                            LOG.warn("reading the recent layer of namespace {} failed: {}", ns, e.toString());
                        } finally {
                            refreshingRecent.remove(ns);
                        }
                    });
                } catch (RejectedExecutionException e) {
                    refreshingRecent.remove(ns); // closing
                }
            }
            return r.layers();
        }
        // the first beside this snapshot, read by this query: few passages changed since a snapshot this new
        try {
            return readRecent(ns, base, version, recentSince).layers();
        } catch (RuntimeException e) {
            // the stores moved away (a rebalance) or a read failed: answered from the snapshot alone, as without
            // recent layers; the next query tries again
            LOG.warn("reading the recent layer of namespace {} failed: {}", ns, e.toString());
            return new Layers(base);
        }
    }

    /** Reads the recent layer beside {@code base} at {@code version}, unless one is current, and keeps it. */
    private Recent readRecent(String ns, MemoryGraph base, long version, LongFunction<RecentRead> recentSince) {
        ReentrantLock lock = recentLocks.computeIfAbsent(ns, n -> new ReentrantLock());
        lock.lock();
        try {
            Recent r = recents.get(ns);
            if (current(r, base, version)) {
                return r;
            }
            long t0 = ticker.nanoTime();
            RecentRead read;
            try {
                read = recentSince.apply(base.version());
            } catch (RuntimeException e) {
                meters.snapshotBuilt(Meters.SnapshotHow.RECENT, false, Duration.ofNanos(ticker.nanoTime() - t0));
                throw e;
            }
            long now = ticker.nanoTime();
            int shadowed = 0;
            long bytes = 0;
            if (read != null) {
                meters.snapshotBuilt(Meters.SnapshotHow.RECENT, true, Duration.ofNanos(now - t0));
                for (String id : read.changed()) {
                    shadowed += base.passageIndex(id) >= 0 ? 1 : 0;
                }
                bytes = read.graph().estimatedBytes() + 64L * read.changed().size();
            }
            Recent next = new Recent(base, read, read != null ? read.graph().version() : version, now, shadowed, bytes);
            if (closed) {
                return next; // served to this caller only, never kept
            }
            Recent previous = recents.put(ns, next);
            if (previous != null && previous.read() != null) {
                previous.read().graph().release();
            }
            Cached still = cache.get(ns);
            if (still == null || still.graph() != base) {
                dropRecent(ns); // the snapshot was evicted or replaced meanwhile: nothing to lie beside
            }
            return next;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether a recent layer serves a query of {@code version} over {@code base}: it was read over this base, and it
     * holds the version or was read less than {@code maxStaleness} ago.
     */
    private boolean current(Recent r, MemoryGraph base, long version) {
        return r != null
                && r.base() == base
                && (r.version() >= version || ticker.nanoTime() - r.builtAtNanos() < maxStalenessNanos);
    }

    /** Lets go of a namespace's recent layer. */
    private void dropRecent(String ns) {
        Recent r = recents.get(ns);
        if (r != null && recents.remove(ns, r) && r.read() != null) {
            r.read().graph().release();
        }
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
            long epoch = assembler.epoch();
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
            long keptBytes = assembler.keptBytes(ns);
            long bytes = g.estimatedBytes() + keptBytes;
            // built from reads made before a restore of the stores: served, and built again at the next query
            boolean trusted = assembler.epoch() == epoch;
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

    /** Bytes the cached snapshots and their recent layers hold, about. */
    public long cachedBytes() {
        return cache.values().stream().mapToLong(Cached::bytes).sum()
                + recents.values().stream().mapToLong(Recent::bytes).sum();
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
        for (String ns : recents.keySet()) {
            if (!cache.containsKey(ns)) {
                dropRecent(ns); // its snapshot left while it was read
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
            dropRecent(ns);
            assembler.drop(ns);
            if (c != null) {
                c.graph().release();
                LOG.debug("snapshot of namespace {} evicted ({}, {} bytes)", ns, why, c.bytes());
            }
            // Its index writer, reader and buffers go too (snapshots still in use keep their own reader); the index
            // stays on disk, and the namespace's next snapshot opens it again and writes only what changed.
            vectors.close(ns);
            return c != null;
        } finally {
            lock.unlock();
        }
    }

    /** The namespace's vector indexes; they outlive snapshots, so each snapshot writes only what changed. */
    HnswVectors vectors(String ns) {
        return vectors.of(ns);
    }

    /** The namespaces whose vector indexes are open. */
    public Set<String> openVectorIndexes() {
        return vectors.open();
    }

    @Override
    public void close() {
        closed = true;
        // a background build runs to its end (interrupting it mid-write would break its index's writer)
        background.shutdown();
        recentReader.shutdown();
        try {
            if (!recentReader.awaitTermination(60, TimeUnit.SECONDS)) {
                LOG.warn("a recent layer is still being read at shutdown");
            }
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
                assembler.drop(ns);
                if (c != null) {
                    c.graph().release();
                }
            } finally {
                lock.unlock();
            }
        }
        for (String ns : recents.keySet()) {
            dropRecent(ns);
        }
        vectors.closeAll();
        assembler.dropAll(); // a build that ended while closing may have kept its parts
        vectors.shutdown(); // a write still running stops at its next vector when its index closes
    }
}
