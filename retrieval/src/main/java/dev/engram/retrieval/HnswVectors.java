package dev.engram.retrieval;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.lucene104.Lucene104Codec;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexFormatTooNewException;
import org.apache.lucene.index.IndexFormatTooOldException;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
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

    private static final String ID = "id";
    private static final String KIND = "kind";
    private static final String FINGERPRINT = "fp";
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

    private final Path path;
    private final int minVectors;
    private final int efSearch;
    private final EngramHnswFormat format;
    /** Where snapshots' changes are written while they are served (null: each snapshot writes its own first). */
    private final Executor background;

    private final Listener listener;
    private final Directories directories;
    /** Written changes are committed when the last commit is older than this. */
    private final long commitEveryNanos;
    /**
     * Per kind, per key: what the index's current reader holds for each vector (keys are not joined to their kind per
     * snapshot). Changed only when a write of changes is published, with the reader.
     */
    private final Map<String, Map<String, Entry>> entries = new HashMap<>();
    /** Comparisons with the entries made: stamps which entries the last one still had. */
    private long syncs;
    /** Publications of written changes (and reopenings): a comparison made before the last one is out of date. */
    private long generation;

    private int size;
    private Directory directory;
    private IndexWriter writer;
    private DirectoryReader reader; // this store's reference; each snapshot takes one more
    private long written;
    private long deleted;
    /** Vectors (new, changed or deleted) the last snapshot found not yet written; read without the lock. */
    private volatile int waiting;
    /** One writer of changes at a time: the background or a snapshot that cannot wait for it. */
    private boolean applying;
    /** The newest snapshot's changes still to be written in the background, and whether a task is queued for them. */
    private Pending pending;

    private boolean scheduled;
    /** Snapshots planned: a write of changes supersedes any plan made before it. */
    private long plans;
    /** The newest plan whose changes were published: an older plan is never written after it. */
    private long publishedPlan;
    /** The newest snapshot that scans vectors beside its graph, and its plan: completed when that plan is published. */
    private Served waitingView;

    private long waitingPlan;
    /** Touched by the writing thread only. */
    private long lastCommitNanos = System.nanoTime();

    private boolean uncommitted;
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
        this(
                path,
                minVectors,
                efSearch,
                maxConn,
                beamWidth,
                background,
                listener,
                Directories.DEFAULT,
                COMMIT_EVERY_NANOS);
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
        if (minVectors < 1 || efSearch < 1) {
            throw new IllegalArgumentException("minVectors and efSearch must be positive");
        }
        this.format = new EngramHnswFormat(maxConn, beamWidth); // checks the graph's parameters
        this.path = path;
        this.minVectors = minVectors;
        this.efSearch = efSearch;
        this.background = background;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.directories = Objects.requireNonNull(directories, "directories");
        this.commitEveryNanos = commitEveryNanos;
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
        return reader == null ? 0 : reader.numDocs();
    }

    /** Vectors indexed now. */
    public synchronized int size() {
        return size;
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

    /**
     * A vector in the index: the fingerprint of its values, the last comparison whose snapshot had it, and the array
     * last seen with these values (null when read back from disk): a later snapshot passing the very same array is
     * known to hold the same values without reading them again, since a vector once passed is never changed.
     */
    private static final class Entry {
        final long fingerprint;
        long seen;
        float[] vector;

        Entry(long fingerprint, float[] vector) {
            this.fingerprint = fingerprint;
            this.vector = vector;
        }
    }

    /**
     * A snapshot's vectors sorted out: the batches searched exactly, and for the ones to index their width, each
     * vector's fingerprint and whether it can be indexed (present and finite).
     */
    private record Plan(
            long number,
            List<Batch> batches,
            Map<String, VectorIndex> exact,
            Map<Batch, Integer> widths,
            Map<Batch, long[]> prints,
            Map<Batch, boolean[]> usable) {}

    /**
     * How a plan differs from the index's reader of {@code generation}: per indexed batch, the positions of the vectors
     * to write (new or changed); per kind, the keys to delete; and per indexed kind, the keys whose vector in the
     * reader is no longer the snapshot's (changed or deleted), which its graph searches leave out.
     */
    private record Diff(
            long generation,
            Map<Batch, int[]> writes,
            Map<String, List<String>> deletes,
            Map<String, List<String>> stale,
            int most) {

        int changes() {
            int n = 0;
            for (int[] w : writes.values()) {
                n += w.length;
            }
            for (List<String> d : deletes.values()) {
                n += d.size();
            }
            return n;
        }
    }

    private record Pending(Plan plan, Diff diff) {}

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
        if (writer != null) {
            reset(new IOException("vector index unreadable at a search", cause)); // lets go of it, and forgets it
        } else {
            forget();
        }
        if (path != null && Files.isDirectory(path)) {
            try (Directory dir = directories.open(path)) {
                for (String file : dir.listAll()) {
                    dir.deleteFile(file);
                }
            }
        }
    }

    @Override
    public Indexed index(List<Batch> batches) {
        try {
            Plan plan;
            Diff diff;
            synchronized (this) {
                if (closed) {
                    return EXACT.index(batches); // a snapshot built while shutting down
                }
                startAgainIfDamaged();
                Found found = new Found(generation, new HashMap<>());
                plan = plan(batches, found);
                if (plan.widths().isEmpty() && writer == null && (path == null || !Files.isDirectory(path))) {
                    return new Indexed(plan.exact(), () -> {}); // nothing to index, nothing indexed before
                }
                open();
                diff = diff(plan, found);
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
                if (closed || writer == null) {
                    return EXACT.index(batches); // closed meanwhile
                }
                // the index is this plan's if nothing was published since its write; otherwise compare again
                return view(
                        plan, applied != null && applied.generation() == generation ? written(plan) : diff(plan, null));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("vector index at " + path + ": " + e.getMessage(), e);
        }
    }

    /** Kinds indexed now: a kind stays indexed until it shrinks below half the threshold (no flapping around it). */
    private final Set<String> indexedKinds = new HashSet<>();

    /**
     * The entries a plan found for the vectors of each indexed batch, by position (null: none), good for a comparison
     * while the index's generation is still {@code generation}: each vector's key is then looked up once per snapshot.
     */
    private record Found(long generation, Map<Batch, Entry[]> byBatch) {}

    private Plan plan(List<Batch> batches, Found found) {
        Map<String, VectorIndex> out = new LinkedHashMap<>();
        Map<Batch, Integer> widths = new LinkedHashMap<>();
        // each vector's fingerprint, and whether it can be indexed: one pass over its values for both
        Map<Batch, long[]> prints = new HashMap<>();
        Map<Batch, boolean[]> usable = new HashMap<>();
        for (Batch b : batches) {
            int threshold = indexedKinds.contains(b.kind()) ? Math.max(1, minVectors / 2) : minVectors;
            if (b.vectors().length < threshold) { // searched exactly whatever its vectors are: nothing to fingerprint
                out.put(b.kind(), VectorIndex.exact(b.vectors()));
                continue;
            }
            int dim = uniformDimension(b.vectors());
            int count = 0;
            long[] fp = new long[b.vectors().length];
            boolean[] ok = new boolean[fp.length];
            Map<String, Entry> known = entries.getOrDefault(b.kind(), Map.of());
            Entry[] looked = new Entry[fp.length];
            found.byBatch().put(b, looked);
            for (int i = 0; i < ok.length; i++) {
                float[] v = b.vectors()[i];
                Entry entry =
                        v == null || known.isEmpty() ? null : known.get(b.keys().get(i));
                looked[i] = entry;
                if (entry != null && entry.vector == v) {
                    fp[i] = entry.fingerprint; // the array fingerprinted before (and finite, as it was indexed)
                    ok[i] = true;
                } else {
                    ok[i] = v != null && fingerprint(v, fp, i); // a missing or non-finite vector is never found
                }
                count += ok[i] ? 1 : 0;
            }
            prints.put(b, fp);
            usable.put(b, ok);
            if (count < threshold || dim <= 0 || dim > EngramHnswFormat.MAX_DIMENSIONS) {
                out.put(b.kind(), VectorIndex.exact(b.vectors()));
            } else {
                widths.put(b, dim);
            }
        }
        indexedKinds.clear();
        widths.keySet().forEach(b -> indexedKinds.add(b.kind()));
        return new Plan(++plans, batches, out, widths, prints, usable);
    }

    /**
     * Compares a plan with what the index's reader holds now; {@code found}: what the plan found, used if the index has
     * not changed since (null: look again).
     */
    private Diff diff(Plan plan, Found found) {
        Map<Batch, Entry[]> lookedUp = found != null && found.generation() == generation ? found.byBatch() : Map.of();
        long stamp = ++syncs;
        Map<Batch, int[]> writes = new LinkedHashMap<>();
        Map<String, List<String>> stale = new HashMap<>();
        Map<String, Integer> perKind = new HashMap<>();
        for (Map.Entry<Batch, Integer> e : plan.widths().entrySet()) {
            Batch b = e.getKey();
            boolean[] ok = plan.usable().get(b);
            long[] fp = plan.prints().get(b);
            Map<String, Entry> known = entries.getOrDefault(b.kind(), Map.of());
            Entry[] looked = lookedUp.get(b);
            int[] w = new int[ok.length];
            int n = 0;
            for (int i = 0; i < ok.length; i++) {
                if (!ok[i]) {
                    continue;
                }
                Entry entry = looked != null ? looked[i] : known.get(b.keys().get(i));
                if (entry == null || entry.fingerprint != fp[i]) {
                    w[n++] = i;
                    if (entry != null) {
                        stale.computeIfAbsent(b.kind(), k -> new ArrayList<>())
                                .add(b.keys().get(i));
                    }
                } else {
                    entry.vector = b.vectors()[i]; // the same values: the next plan knows them by this array
                }
                if (entry != null) {
                    entry.seen = stamp;
                }
            }
            writes.put(b, Arrays.copyOf(w, n));
            perKind.merge(b.kind(), n, Integer::sum);
        }
        // what this snapshot no longer has, including every vector of a kind it searches exactly now
        Set<String> graphs = new HashSet<>();
        plan.widths().keySet().forEach(b -> graphs.add(b.kind()));
        Map<String, List<String>> deletes = new HashMap<>();
        for (Map.Entry<String, Map<String, Entry>> kind : entries.entrySet()) {
            for (Map.Entry<String, Entry> e : kind.getValue().entrySet()) {
                if (e.getValue().seen != stamp) {
                    deletes.computeIfAbsent(kind.getKey(), k -> new ArrayList<>())
                            .add(e.getKey());
                    if (graphs.contains(kind.getKey())) {
                        stale.computeIfAbsent(kind.getKey(), k -> new ArrayList<>())
                                .add(e.getKey());
                    }
                }
            }
        }
        deletes.forEach((kind, keys) -> perKind.merge(kind, keys.size(), Integer::sum));
        int most = perKind.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        return new Diff(generation, writes, deletes, stale, most);
    }

    /** The diff of a plan with the index that holds it: nothing to write, at the current generation. */
    private Diff written(Plan plan) {
        Map<Batch, int[]> none = new LinkedHashMap<>();
        plan.widths().keySet().forEach(b -> none.put(b, new int[0]));
        return new Diff(generation, none, Map.of(), Map.of(), 0);
    }

    /** The snapshot's indexes: each indexed kind's graph as the reader holds it, and what it lacks scanned beside. */
    private Indexed view(Plan plan, Diff diff) {
        Map<String, VectorIndex> out = new LinkedHashMap<>(plan.exact());
        waiting = diff.changes();
        if (plan.widths().isEmpty()) {
            return new Indexed(out, () -> {});
        }
        long of = incarnation;
        Served served = new Served(reader, cause -> damaged(of, cause));
        if (diff.changes() > 0) {
            waitingView = served;
            waitingPlan = plan.number();
        }
        for (Map.Entry<Batch, Integer> e : plan.widths().entrySet()) {
            Batch b = e.getKey();
            Map<String, Integer> positions = HashMap.newHashMap(b.keys().size());
            boolean[] ok = plan.usable().get(b);
            for (int i = 0; i < b.keys().size(); i++) {
                if (ok[i]) {
                    positions.put(b.keys().get(i), i);
                }
            }
            List<String> stale = diff.stale().getOrDefault(b.kind(), List.of());
            // a few stale vectors: the graph search gathers as many more candidates; many: it filters them out
            Query leftOut = stale.size() <= efSearch
                    ? null
                    : new TermInSetQuery(
                            ID,
                            stale.stream()
                                    .map(key -> new BytesRef(docId(b.kind(), key)))
                                    .toList());
            out.put(
                    b.kind(),
                    new Hnsw(
                            served,
                            field(b.kind(), e.getValue()),
                            positions,
                            b.vectors(),
                            efSearch,
                            diff.writes().get(b),
                            stale.size(),
                            leftOut));
        }
        return new Indexed(out, served::release);
    }

    /**
     * The reader a snapshot's searches use, shared by its kinds: first the index as the snapshot found it, with what
     * the snapshot has beyond it scanned; once the background has published exactly the snapshot's vectors, the index
     * that holds them, with nothing scanned, so a snapshot that keeps serving (its namespace went quiet) stops paying
     * for the scan.
     */
    static final class Served {
        /** A reader, and whether it holds exactly the snapshot's vectors (nothing to scan or leave out). */
        record State(DirectoryReader reader, boolean complete) {}

        private volatile State state;
        private boolean released;
        /** Set once a search of this reader failed: the snapshot's searches scan from then on. */
        private volatile boolean broken;

        private final Consumer<Throwable> onDamage;

        Served(DirectoryReader reader, Consumer<Throwable> onDamage) {
            reader.incRef();
            this.state = new State(reader, false);
            this.onDamage = onDamage;
        }

        /** A search of the reader failed: the snapshot scans, and the store hears of it once. */
        void damaged(Throwable cause) {
            if (!broken) {
                broken = true;
                onDamage.accept(cause);
            }
        }

        boolean broken() {
            return broken;
        }

        State state() {
            return state;
        }

        /** Searches from now on use {@code complete}, which holds exactly the snapshot's vectors. */
        void complete(DirectoryReader complete) throws IOException {
            DirectoryReader old;
            synchronized (this) {
                if (released) {
                    return;
                }
                complete.incRef();
                old = state.reader();
                state = new State(complete, true);
            }
            old.decRef(); // a search running on it holds a reference of its own
        }

        /** Once: a second release must not close a reader in use. */
        void release() {
            DirectoryReader r;
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
                r = state.reader();
            }
            try {
                r.decRef();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
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
    private Applied apply(Plan plan, Diff diff) throws IOException {
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
            Diff d;
            synchronized (this) {
                open();
                d = diff.generation() == generation ? diff : diff(plan, null);
                w = writer;
                base = reader;
            }
            long wrote = 0;
            for (Map.Entry<Batch, int[]> e : d.writes().entrySet()) {
                Batch b = e.getKey();
                String field = field(b.kind(), plan.widths().get(b));
                long[] fp = plan.prints().get(b);
                for (int i : e.getValue()) {
                    if (closed) {
                        return null; // what was written is committed at close and read back on open
                    }
                    String id = docId(b.kind(), b.keys().get(i));
                    Document doc = new Document();
                    doc.add(new StringField(ID, id, Field.Store.YES));
                    doc.add(new SortedDocValuesField(ID, new BytesRef(id)));
                    doc.add(new StringField(KIND, b.kind(), Field.Store.NO));
                    doc.add(new StoredField(FINGERPRINT, fp[i]));
                    doc.add(new KnnFloatVectorField(field, b.vectors()[i], VectorSimilarityFunction.DOT_PRODUCT));
                    w.updateDocument(new Term(ID, id), doc);
                    wrote++;
                }
            }
            long removed = 0;
            for (Map.Entry<String, List<String>> e : d.deletes().entrySet()) {
                for (String key : e.getValue()) {
                    w.deleteDocuments(new Term(ID, docId(e.getKey(), key)));
                    removed++;
                }
            }
            uncommitted |= wrote + removed > 0;
            fresh = DirectoryReader.openIfChanged(base, w);
            if (uncommitted && System.nanoTime() - lastCommitNanos >= commitEveryNanos) {
                w.commit();
                uncommitted = false;
                lastCommitNanos = System.nanoTime();
            }
            synchronized (this) {
                published = true; // from here on the reader is the store's, whatever publish does
                publish(plan, d, fresh);
                written += wrote;
                deleted += removed;
                return new Applied(generation, wrote, removed);
            }
        } catch (IOException | RuntimeException e) {
            if (!published) {
                IOUtils.closeWhileHandlingException(fresh);
            }
            // The writer may be gone (a full disk closes it) and the fingerprints no longer match what was written:
            // let go of everything; the next snapshot reopens from the last commit and writes the difference again.
            synchronized (this) {
                reset(e);
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
    private void publish(Plan plan, Diff d, DirectoryReader fresh) throws IOException {
        DirectoryReader old = null;
        if (fresh != null) { // first: whatever happens next, the store owns the new reader
            old = reader;
            reader = fresh;
        }
        for (Map.Entry<Batch, int[]> e : d.writes().entrySet()) {
            Batch b = e.getKey();
            long[] fp = plan.prints().get(b);
            Map<String, Entry> known = entries.computeIfAbsent(b.kind(), k -> new HashMap<>());
            for (int i : e.getValue()) {
                if (known.put(b.keys().get(i), new Entry(fp[i], b.vectors()[i])) == null) {
                    size++;
                }
            }
        }
        for (Map.Entry<String, List<String>> e : d.deletes().entrySet()) {
            Map<String, Entry> known = entries.get(e.getKey());
            if (known == null) {
                continue;
            }
            for (String key : e.getValue()) {
                if (known.remove(key) != null) {
                    size--;
                }
            }
            if (known.isEmpty()) {
                entries.remove(e.getKey());
            }
        }
        generation++;
        publishedPlan = Math.max(publishedPlan, plan.number());
        if (pending != null && pending.plan().number() < plan.number()) {
            pending = null; // superseded by what was just written
        }
        if (waitingView != null && waitingPlan <= plan.number()) {
            if (waitingPlan == plan.number()) {
                waitingView.complete(reader);
            }
            waitingView = null; // a newer state than the snapshot's is not its own
            waiting = 0; // what the latest snapshot lacked is written
        }
        if (old != null) {
            old.decRef();
        }
    }

    private void open() throws IOException {
        if (writer != null) {
            return;
        }
        if (path != null) {
            Files.createDirectories(path);
        }
        Directory dir = directories.open(path);
        try {
            try {
                load(dir);
            } catch (CorruptIndexException | IndexFormatTooOldException | IndexFormatTooNewException e) {
                // the index only holds what the stores hold: a damaged or unreadable one is started again empty, and
                // the snapshot writes every vector into it
                for (String file : dir.listAll()) {
                    dir.deleteFile(file);
                }
                load(dir);
                try {
                    listener.failed(
                            new IOException("vector index unreadable, started again empty: " + e.getMessage(), e));
                } catch (RuntimeException ignored) {
                    // the index is open: a listener's failure must not undo that
                }
            }
        } catch (IOException | RuntimeException e) {
            IOUtils.closeWhileHandlingException(dir);
            throw e;
        }
    }

    /** Opens a writer and a reader on the directory and reads what the index holds; closes them if that fails. */
    private void load(Directory dir) throws IOException {
        IndexWriter w = null;
        DirectoryReader r = null;
        Map<String, Map<String, Entry>> loaded = new HashMap<>();
        int count = 0;
        try {
            IndexWriterConfig config = new IndexWriterConfig()
                    .setOpenMode(IndexWriterConfig.OpenMode.CREATE_OR_APPEND)
                    .setRAMBufferSizeMB(64)
                    .setCodec(new Lucene104Codec() {
                        @Override
                        public KnnVectorsFormat getKnnVectorsFormatForField(String field) {
                            return format;
                        }
                    });
            w = new IndexWriter(dir, config);
            r = DirectoryReader.open(w);
            for (LeafReaderContext leaf : r.leaves()) {
                Bits live = leaf.reader().getLiveDocs();
                StoredFields stored = leaf.reader().storedFields();
                for (int d = 0; d < leaf.reader().maxDoc(); d++) {
                    if (live == null || live.get(d)) {
                        Document doc = stored.document(d);
                        String id = doc.get(ID);
                        int cut = id.indexOf('\u0000');
                        Entry entry = new Entry(
                                doc.getField(FINGERPRINT).numericValue().longValue(), null);
                        if (loaded.computeIfAbsent(id.substring(0, cut), k -> new HashMap<>())
                                        .put(id.substring(cut + 1), entry)
                                == null) {
                            count++;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            IOUtils.closeWhileHandlingException(r, w);
            throw e;
        }
        directory = dir;
        writer = w;
        reader = r;
        entries.clear();
        entries.putAll(loaded);
        size = count;
        generation++; // what any earlier comparison was made against is gone
        uncommitted = false;
    }

    /** Lets go of the writer, its reader and directory after a failure, keeping what was committed on disk. */
    private void reset(Exception cause) {
        if (writer == null) {
            return;
        }
        try {
            writer.rollback(); // drops what was not committed and closes the writer
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
        try {
            reader.decRef();
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
        IOUtils.closeWhileHandlingException(directory);
        forget();
    }

    /** Lets go of the writer, its reader and directory, and of what they were known to hold. */
    private void forget() {
        writer = null;
        reader = null;
        directory = null;
        entries.clear();
        size = 0;
        indexedKinds.clear();
        generation++;
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
        if (writer == null) {
            return;
        }
        IndexWriter w = writer;
        DirectoryReader r = reader;
        Directory dir = directory;
        forget();
        // each is closed whatever the others do; closing the writer commits what is pending
        IOUtils.close(r::decRef, w, dir);
    }

    private static String docId(String kind, String key) {
        return kind + '\u0000' + key;
    }

    /** One vector field per kind and width, so that a change of embedder never mixes widths in one graph. */
    private static String field(String kind, int dim) {
        return kind + "_" + dim;
    }

    private static int uniformDimension(float[][] vectors) {
        int dim = 0;
        for (float[] v : vectors) {
            if (v == null) {
                continue;
            }
            if (dim == 0) {
                dim = v.length;
            } else if (v.length != dim) {
                return -1;
            }
        }
        return dim;
    }

    /**
     * FNV-1a over the float bits, which tells a changed vector from an unchanged one, into {@code out[at]}; and whether
     * every value is finite (a vector that is not is never indexed), in the same pass over the values.
     */
    static boolean fingerprint(float[] v, long[] out, int at) {
        long h = 0xcbf29ce484222325L ^ v.length;
        boolean finite = true;
        for (float x : v) {
            int bits = Float.floatToIntBits(x);
            finite &= (bits & 0x7f800000) != 0x7f800000; // all exponent bits set: infinite or NaN
            h ^= bits;
            h *= 0x100000001b3L;
        }
        out[at] = h;
        return finite;
    }

    /**
     * A snapshot's search over one kind: the graph of its reader, leaving out vectors the snapshot no longer has as
     * they were, and a scan of the vectors the graph does not hold yet; falls back to a scan of everything once the
     * snapshot has been released.
     */
    static final class Hnsw implements VectorIndex {
        private final Served served;
        private final String field;
        private final Map<String, Integer> positions;
        private final float[][] vectors;
        private final int efSearch;
        /** Positions of the vectors the graph does not hold (or holds with other values): scanned. */
        private final int[] tail;
        /** How many of the graph's vectors are stale (changed or gone): found, then left out. */
        private final int staleCount;
        /**
         * Leaves the graph's stale documents out of its search, or null: then the search gathers {@link #staleCount}
         * more candidates instead (a filter costs a pass over the index's documents per search, more than a few extra
         * candidates).
         */
        private final Query stale;

        private volatile VectorIndex exact; // made on first need: after the snapshot's release

        Hnsw(
                Served served,
                String field,
                Map<String, Integer> positions,
                float[][] vectors,
                int efSearch,
                int[] tail,
                int staleCount,
                Query stale) {
            this.served = served;
            this.field = field;
            this.positions = positions;
            this.vectors = vectors;
            this.efSearch = efSearch;
            this.tail = tail;
            this.staleCount = staleCount;
            this.stale = stale == null
                    ? null
                    : new BooleanQuery.Builder()
                            .add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER)
                            .add(stale, BooleanClause.Occur.MUST_NOT)
                            .build();
        }

        @Override
        public String kind() {
            return "hnsw";
        }

        /** A search gathers {@code max(k, efSearch)} candidates: the same ones for every {@code k} up to efSearch. */
        @Override
        public int headsAgreeUpTo() {
            return efSearch;
        }

        /** Vectors scanned beside the graph. */
        int tail() {
            return served.state().complete() ? 0 : tail.length;
        }

        private VectorIndex scan() {
            VectorIndex e = exact;
            if (e == null) {
                e = VectorIndex.exact(vectors);
                exact = e;
            }
            return e;
        }

        /** Whether graph searches are still possible (false once the snapshot's reader is closed). */
        boolean searchable() {
            return served.state().reader().getRefCount() > 0;
        }

        @Override
        public List<Retrieval.Scored> nearest(float[] query, int k) {
            if (served.broken()) {
                return scan().nearest(query, k);
            }
            Served.State state = served.state();
            if (!state.reader().tryIncRef()) {
                state = served.state(); // completed meanwhile, or released
                if (!state.reader().tryIncRef()) {
                    return scan().nearest(query, k);
                }
            }
            DirectoryReader reader = state.reader();
            if (k <= 0 || !field.endsWith("_" + query.length)) {
                try {
                    reader.decRef();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return scan().nearest(query, k); // a width mismatch gets the scan's clear error
            }
            List<Retrieval.Scored> found;
            try {
                found = search(reader, state.complete(), query, k);
            } catch (IOException | RuntimeException | InternalError e) {
                // the index's files cannot be read (damaged, gone, a disk that fails; a fault in a mapped file is an
                // InternalError): the snapshot holds every vector, so it answers by a scan, and the store starts
                // the index again
                try {
                    reader.decRef();
                } catch (IOException | RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
                served.damaged(e);
                return scan().nearest(query, k);
            }
            try {
                reader.decRef();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return found;
        }

        private List<Retrieval.Scored> search(DirectoryReader reader, boolean complete, float[] query, int k)
                throws IOException {
            int n = Math.min(Math.max(k, efSearch), Math.max(1, positions.size()));
            int stales = complete ? 0 : staleCount;
            Query filter = complete ? null : stale;
            int gathered = filter == null ? n + stales : n;
            ScoreDoc[] hits = new IndexSearcher(reader)
                    .search(new KnnFloatVectorQuery(field, query, gathered, filter), gathered)
                    .scoreDocs;
            // keys from doc values, leaf by leaf in doc order (their iterators only go forward)
            Arrays.sort(hits, Comparator.comparingInt((ScoreDoc h) -> h.doc));
            List<LeafReaderContext> leaves = reader.leaves();
            VectorIndex.TopK top = new VectorIndex.TopK(Math.min(k, positions.size()));
            SortedDocValues ids = null;
            int leaf = -1;
            for (ScoreDoc hit : hits) {
                int at = ReaderUtil.subIndex(hit.doc, leaves);
                if (at != leaf) {
                    leaf = at;
                    ids = leaves.get(at).reader().getSortedDocValues(ID);
                }
                int doc = hit.doc - leaves.get(at).docBase;
                if (ids == null || !ids.advanceExact(doc)) {
                    continue;
                }
                String id = ids.lookupOrd(ids.ordValue()).utf8ToString();
                Integer p = positions.get(id.substring(id.indexOf('\u0000') + 1));
                if (p != null && (stales == 0 || !inTail(p))) {
                    top.offer(p, Retrieval.dot(query, vectors[p])); // a changed vector is offered once, from the tail
                }
            }
            if (!complete) {
                for (int p : tail) {
                    top.offer(p, Retrieval.dot(query, vectors[p]));
                }
            }
            return top.drain();
        }

        private boolean inTail(int p) {
            return Arrays.binarySearch(tail, p) >= 0; // ascending: positions in batch order
        }
    }
}
