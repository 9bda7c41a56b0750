package dev.engram.retrieval;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.IOUtils;

/**
 * A namespace's approximate vector indexes: Lucene HNSW graphs, kept up to date across snapshots instead of being
 * rebuilt for each. Every snapshot hands over all its keyed vectors; only the ones that are new or changed (by a
 * fingerprint of their values) are written, the ones that are gone are deleted, and a near-real-time reader opened
 * afterwards is the snapshot's point-in-time view (later writes never show through it). Kinds with fewer than
 * {@code minVectors} vectors are searched exactly and not indexed. On disk the index outlives a restart: its
 * fingerprints are read back on open and the first snapshot writes only the difference.
 *
 * <p>With a background executor, a snapshot does not wait for its vectors to be inserted into the graphs, which is
 * most of what a snapshot of a large namespace costs: it searches the graphs as they are and scans the vectors they do
 * not hold yet (new or changed since) beside them, exactly, while the background writes them; the next snapshot finds
 * them in the graphs. Answers are the same as if every vector were in the graphs, up to the graph search's
 * approximation. Only when more than {@code minVectors} vectors of one kind wait (the background does not keep up, or
 * a kind has just reached the threshold) does a snapshot write them itself first.
 */
public final class HnswVectors implements VectorIndexer, Closeable {

    private static final long COMMIT_EVERY_NANOS = 30_000_000_000L;

    /** Opens the directory of an index: on disk at a path, in memory without one. */
    @FunctionalInterface
    interface Directories {
        Directory open(Path path) throws IOException;

        Directories DEFAULT = path -> path == null ? new ByteBuffersDirectory() : FSDirectory.open(path);
    }

    /** Hears what the background writes and when it fails. */
    public interface Listener {
        /** Vectors written to and deleted from the index by one write of a snapshot's changes. */
        void applied(long written, long deleted);

        /**
         * A background write failed (the next snapshot writes its changes itself, from the last commit), or the index on
         * disk was unreadable (damaged, or of another Lucene format) and was started again empty.
         */
        void failed(Exception e);
    }

    private static final Listener SILENT = new Listener() {
        @Override
        public void applied(long written, long deleted) {}

        @Override
        public void failed(Exception e) {}
    };

    private final int minVectors;
    private final int efSearch;
    /** Where snapshots' changes are written while they are served (null: each snapshot writes its own first). */
    private final Executor background;

    private final Listener listener;
    /** What the index holds, per kind and key: each vector's fingerprint. */
    private final KnownVectors known;
    /** The index's directory, writer and reader. */
    private final HnswFiles files;

    private long written;
    private long deleted;
    /** Vectors (new, changed or deleted) the last snapshot found not yet written; read without the lock. */
    private volatile int waiting;
    /** One writer of changes at a time: the background or a snapshot that cannot wait for it. */
    private boolean applying;
    /** The newest snapshot's changes still to be written in the background, and whether a task is queued for them. */
    private Pending pending;

    private boolean scheduled;
    /** The newest plan whose changes were published: an older plan is never written after it. */
    private long publishedPlan;
    /** The newest snapshot that scans vectors beside its graph, and its plan: completed when that plan is published. */
    private ServedReader waitingView;

    private long waitingPlan;
    private volatile boolean closed;

    /** With the default graph parameters ({@link EngramHnswFormat}), each snapshot writing its own changes. */
    public HnswVectors(Path path, int minVectors, int efSearch) {
        this(path, minVectors, efSearch, EngramHnswFormat.DEFAULT_MAX_CONN, EngramHnswFormat.DEFAULT_BEAM_WIDTH);
    }

    /** Each snapshot writing its own changes before it is served. */
    public HnswVectors(Path path, int minVectors, int efSearch, int maxConn, int beamWidth) {
        this(path, minVectors, efSearch, maxConn, beamWidth, null, SILENT);
    }

    /**
     * @param path where the index lives, or null to keep it in memory
     * @param minVectors the size from which a kind is indexed (below it a scan is as fast and exact), and how many
     *     vectors of a kind a snapshot scans at most beside its graph while they wait to be written
     * @param efSearch candidates gathered by a graph search (at least the number asked for); more is slower and
     *     nearer to exact
     * @param maxConn neighbours per node of the graphs written from now on
     * @param beamWidth candidates a node's insertion keeps while it searches for its neighbours: building costs about
     *     in proportion
     * @param background where snapshots' changes are written while the snapshots are served (one task at a time per
     *     store; it must run tasks on a thread of its own, never in the caller), or null for each snapshot to write its
     *     own before it is served
     * @param listener hears what is written and when a background write fails
     */
    public HnswVectors(
            Path path,
            int minVectors,
            int efSearch,
            int maxConn,
            int beamWidth,
            Executor background,
            Listener listener) {
        this(path, minVectors, efSearch, new EngramHnswFormat(maxConn, beamWidth), background, listener);
    }

    /**
     * As {@link #HnswVectors(Path, int, int, int, int, Executor, Listener)}, the graphs written in {@code format}
     * (its parameters and quantization).
     */
    public HnswVectors(
            Path path, int minVectors, int efSearch, EngramHnswFormat format, Executor background, Listener listener) {
        this(path, minVectors, efSearch, format, background, listener, Directories.DEFAULT, COMMIT_EVERY_NANOS);
    }

    /** Like the public constructor, with the directory and the commit interval chosen (tests: faults, commits). */
    HnswVectors(
            Path path,
            int minVectors,
            int efSearch,
            int maxConn,
            int beamWidth,
            Executor background,
            Listener listener,
            Directories directories,
            long commitEveryNanos) {
        this(
                path,
                minVectors,
                efSearch,
                new EngramHnswFormat(maxConn, beamWidth), // checks the graph's parameters
                background,
                listener,
                directories,
                commitEveryNanos);
    }

    private HnswVectors(
            Path path,
            int minVectors,
            int efSearch,
            EngramHnswFormat format,
            Executor background,
            Listener listener,
            Directories directories,
            long commitEveryNanos) {
        if (minVectors < 1 || efSearch < 1) {
            throw new IllegalArgumentException("minVectors and efSearch must be positive");
        }
        Objects.requireNonNull(format, "format");
        this.minVectors = minVectors;
        this.efSearch = efSearch;
        this.background = background;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.known = new KnownVectors(minVectors);
        this.files = new HnswFiles(
                path, format, Objects.requireNonNull(directories, "directories"), commitEveryNanos, known);
    }

    /** Vectors written (new or changed) since this store was opened. */
    public synchronized long written() {
        return written;
    }

    /** Vectors deleted since this store was opened. */
    public synchronized long deleted() {
        return deleted;
    }

    /** Documents live in the index now, as Lucene counts them (for tests and diagnostics). */
    synchronized int liveDocs() {
        return files.reader() == null ? 0 : files.reader().numDocs();
    }

    /** Vectors indexed now. */
    public synchronized int size() {
        return known.size();
    }

    /**
     * Vectors the last snapshot found not yet written, until they are: new and changed ones, which it scans beside the
     * graphs, and deleted ones, which its graph searches leave out.
     */
    public int waiting() {
        return waiting;
    }

    /** Waits until no write of changes is queued or running (for tests and benchmarks). */
    public synchronized void awaitWritten() throws InterruptedException {
        while (scheduled || applying) {
            wait();
        }
    }

    private record Pending(KnownVectors.Plan plan, KnownVectors.Diff diff) {}

    /** A search found the index unreadable: the next snapshot starts it again empty (null: none did). */
    private volatile Throwable damage;
    /**
     * How many times the index was started again after a damaged search: a report from a snapshot of an earlier one
     * (still served, on the files of before) is not about the index as it is now.
     */
    private volatile long incarnation;

    private void damaged(long of, Throwable cause) {
        if (damage != null || of != incarnation) {
            return;
        }
        damage = cause;
        try {
            listener.failed(new IOException(
                    "vector index unreadable at a search, answered by a scan; started again empty at the next snapshot: "
                            + cause,
                    cause));
        } catch (RuntimeException ignored) {
            // a listener's failure changes nothing here
        }
    }

    /** Drops an index a search found unreadable, files included, unless a write is under way (then the next time). */
    private void startAgainIfDamaged() throws IOException {
        Throwable cause = damage;
        if (cause == null || applying) {
            return;
        }
        damage = null;
        incarnation++;
        if (files.isOpen()) {
            files.reset(new IOException("vector index unreadable at a search", cause)); // lets go of it, and forgets it
        } else {
            files.forget();
        }
        files.deleteAll();
    }

    @Override
    public Indexed index(List<Batch> batches) {
        try {
            KnownVectors.Plan plan;
            KnownVectors.Diff diff;
            synchronized (this) {
                if (closed) {
                    return EXACT.index(batches); // a snapshot built while shutting down
                }
                startAgainIfDamaged();
                KnownVectors.Found found = known.found();
                plan = known.plan(batches, found);
                if (plan.widths().isEmpty() && !files.isOpen() && !files.onDisk()) {
                    return new Indexed(plan.exact(), () -> {}); // nothing to index, nothing indexed before
                }
                files.open(listener);
                diff = known.diff(plan, found);
                if (background != null && diff.most() <= minVectors) {
                    Indexed served = view(plan, diff);
                    if (diff.changes() > 0 || applying) {
                        // a write in progress publishes an older state: this snapshot's follows it, compared again
                        schedule(new Pending(plan, diff));
                    } else {
                        // the index is this snapshot: no older plan, queued or taken, is written over it
                        pending = null;
                        publishedPlan = Math.max(publishedPlan, plan.number());
                    }
                    return served;
                }
            }
            Applied applied = apply(plan, diff);
            heard(applied);
            synchronized (this) {
                if (closed || !files.isOpen()) {
                    return EXACT.index(batches); // closed meanwhile
                }
                // the index is this plan's if nothing was published since its write; otherwise compare again
                return view(
                        plan,
                        applied != null && applied.generation() == known.generation()
                                ? known.written(plan)
                                : known.diff(plan, null));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("vector index at " + files.path() + ": " + e.getMessage(), e);
        }
    }

    /** The snapshot's indexes: each indexed kind's graph as the reader holds it, and what it lacks scanned beside. */
    private Indexed view(KnownVectors.Plan plan, KnownVectors.Diff diff) {
        Map<String, VectorIndex> out = new LinkedHashMap<>(plan.exact());
        waiting = diff.changes();
        if (plan.widths().isEmpty()) {
            return new Indexed(out, () -> {});
        }
        long of = incarnation;
        ServedReader served = new ServedReader(files.reader(), cause -> damaged(of, cause));
        if (diff.changes() > 0) {
            waitingView = served;
            waitingPlan = plan.number();
        }
        for (Map.Entry<Batch, Integer> e : plan.widths().entrySet()) {
            Batch b = e.getKey();
            out.put(
                    b.kind(),
                    HnswSearch.of(
                            served,
                            b,
                            e.getValue(),
                            plan.usable().get(b),
                            efSearch,
                            diff.writes().get(b),
                            diff.stale().getOrDefault(b.kind(), List.of())));
        }
        return new Indexed(out, served::release);
    }

    /** Queues the newest snapshot's changes; a write queued or running takes them when it is done. */
    private void schedule(Pending next) {
        pending = next;
        if (scheduled) {
            return;
        }
        scheduled = true;
        try {
            background.execute(this::writePending);
        } catch (RuntimeException e) { // rejected (shutting down): the next snapshot (if any) writes its own
            scheduled = false;
            pending = null;
            notifyAll();
        }
    }

    /**
     * The background task: writes the newest pending changes. Changes that arrive meanwhile are queued as a new task
     * behind those of other stores sharing the background, so that an index written without pause (a namespace under
     * a steady stream of writes) never holds back the others' writes.
     */
    private void writePending() {
        try {
            Pending p = takePending();
            if (p != null) {
                try {
                    heard(apply(p.plan(), p.diff()));
                } catch (IOException | RuntimeException e) {
                    try {
                        listener.failed(e);
                    } catch (RuntimeException ignored) {
                        // a listener's failure must not stop the writes
                    }
                }
            }
        } finally {
            synchronized (this) {
                scheduled = false;
                notifyAll();
                if (pending != null && !closed) {
                    schedule(pending); // arrived while this task wrote, or left by an error
                }
            }
        }
    }

    private synchronized Pending takePending() {
        Pending p = pending;
        pending = null;
        return closed ? null : p;
    }

    private void heard(Applied applied) {
        if (applied == null) {
            return;
        }
        try {
            listener.applied(applied.written(), applied.deleted());
        } catch (RuntimeException ignored) {
            // a listener's failure must not undo a write that succeeded
        }
    }

    /** A published write: the generation it made, and how many vectors it wrote and deleted. */
    private record Applied(long generation, long written, long deleted) {}

    /**
     * Writes a plan's changes and publishes a reader that has them. The diff is used if the reader it was made against
     * is still the current one, made again otherwise. The writing is done outside this store's lock, so snapshots are
     * planned and served meanwhile. Null if nothing was published: the store closed, or a newer plan was published
     * first (whose state must not be written over).
     */
    private Applied apply(KnownVectors.Plan plan, KnownVectors.Diff diff) throws IOException {
        synchronized (this) {
            while (applying) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while waiting for the vector index's writer", e);
                }
            }
            if (closed || plan.number() < publishedPlan) {
                return null;
            }
            applying = true;
        }
        DirectoryReader fresh = null;
        boolean published = false;
        try {
            IndexWriter w;
            DirectoryReader base;
            KnownVectors.Diff d;
            synchronized (this) {
                files.open(listener);
                d = diff.generation() == known.generation() ? diff : known.diff(plan, null);
                w = files.writer();
                base = files.reader();
            }
            long wrote = 0;
            for (Map.Entry<Batch, int[]> e : d.writes().entrySet()) {
                Batch b = e.getKey();
                String field = HnswFiles.field(b.kind(), plan.widths().get(b));
                long[] fp = plan.prints().get(b);
                for (int i : e.getValue()) {
                    if (closed) {
                        return null; // what was written is committed at close and read back on open
                    }
                    HnswFiles.write(
                            w,
                            b.kind(),
                            b.keys().get(i),
                            fp[i],
                            field,
                            b.vectors().get(i));
                    wrote++;
                }
            }
            long removed = 0;
            for (Map.Entry<String, List<String>> e : d.deletes().entrySet()) {
                for (String key : e.getValue()) {
                    HnswFiles.delete(w, e.getKey(), key);
                    removed++;
                }
            }
            files.changed(wrote + removed > 0);
            fresh = DirectoryReader.openIfChanged(base, w);
            files.commitIfDue(w);
            synchronized (this) {
                published = true; // from here on the reader is the store's, whatever publish does
                publish(plan, d, fresh);
                written += wrote;
                deleted += removed;
                return new Applied(known.generation(), wrote, removed);
            }
        } catch (IOException | RuntimeException e) {
            if (!published) {
                IOUtils.closeWhileHandlingException(fresh);
            }
            // The writer may be gone (a full disk closes it) and the fingerprints no longer match what was written:
            // let go of everything; the next snapshot reopens from the last commit and writes the difference again.
            synchronized (this) {
                files.reset(e);
            }
            throw e;
        } finally {
            synchronized (this) {
                applying = false;
                notifyAll();
            }
        }
    }

    /** Makes written changes the index's current state: its entries and its reader. */
    private void publish(KnownVectors.Plan plan, KnownVectors.Diff d, DirectoryReader fresh) throws IOException {
        DirectoryReader old = null;
        if (fresh != null) { // first: whatever happens next, the store owns the new reader
            old = files.replaceReader(fresh);
        }
        known.published(plan, d);
        publishedPlan = Math.max(publishedPlan, plan.number());
        if (pending != null && pending.plan().number() < plan.number()) {
            pending = null; // superseded by what was just written
        }
        if (waitingView != null && waitingPlan <= plan.number()) {
            if (waitingPlan == plan.number()) {
                waitingView.complete(files.reader());
            }
            waitingView = null; // a newer state than the snapshot's is not its own
            waiting = 0; // what the latest snapshot lacked is written
        }
        if (old != null) {
            old.decRef();
        }
    }

    /**
     * Closes the index, committing what was written; a background write in progress stops at its next vector (what it
     * wrote is committed, and read back when the index is opened again).
     */
    @Override
    public synchronized void close() throws IOException {
        closed = true;
        pending = null;
        boolean interrupted = false;
        while (applying) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        files.close();
    }
}
