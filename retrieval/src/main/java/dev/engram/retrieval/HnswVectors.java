package dev.engram.retrieval;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.lucene104.Lucene104Codec;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.ScoreDoc;
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
 */
public final class HnswVectors implements VectorIndexer, Closeable {

    private static final String ID = "id";
    private static final String KIND = "kind";
    private static final String FINGERPRINT = "fp";

    private final Path path;
    private final int minVectors;
    private final int efSearch;
    private final EngramHnswFormat format;
    /** Per kind, per key: what the index holds for each vector (keys are not joined to their kind per snapshot). */
    private final Map<String, Map<String, Entry>> entries = new HashMap<>();
    /** Snapshots synchronized: stamps which entries the last one still had. */
    private long syncs;

    private int size;
    private Directory directory;
    private IndexWriter writer;
    private DirectoryReader reader; // this store's reference; each snapshot takes one more
    private long written;
    private long deleted;
    private long lastCommitNanos = System.nanoTime();
    private boolean uncommitted;
    private boolean closed;

    /** With the default graph parameters ({@link EngramHnswFormat}). */
    public HnswVectors(Path path, int minVectors, int efSearch) {
        this(path, minVectors, efSearch, EngramHnswFormat.DEFAULT_MAX_CONN, EngramHnswFormat.DEFAULT_BEAM_WIDTH);
    }

    /**
     * @param path where the index lives, or null to keep it in memory
     * @param minVectors the size from which a kind is indexed (below it a scan is as fast and exact)
     * @param efSearch candidates gathered by a graph search (at least the number asked for); more is slower and
     *     nearer to exact
     * @param maxConn neighbours per node of the graphs written from now on
     * @param beamWidth candidates a node's insertion keeps while it searches for its neighbours: building costs about
     *     in proportion
     */
    public HnswVectors(Path path, int minVectors, int efSearch, int maxConn, int beamWidth) {
        if (minVectors < 1 || efSearch < 1) {
            throw new IllegalArgumentException("minVectors and efSearch must be positive");
        }
        this.format = new EngramHnswFormat(maxConn, beamWidth); // checks the graph's parameters
        this.path = path;
        this.minVectors = minVectors;
        this.efSearch = efSearch;
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

    /** A vector in the index: the fingerprint of its values, and the last synchronization whose snapshot had it. */
    private static final class Entry {
        long fingerprint;
        long seen;

        Entry(long fingerprint) {
            this.fingerprint = fingerprint;
        }
    }

    @Override
    public synchronized Indexed index(List<Batch> batches) {
        if (closed) {
            return EXACT.index(batches); // a snapshot built while shutting down
        }
        try {
            return sync(batches);
        } catch (IOException | RuntimeException e) {
            // The writer may be gone (a full disk closes it) and the fingerprints no longer match what was written:
            // let go of everything; the next snapshot reopens from the last commit and writes the difference again.
            reset(e);
            if (e instanceof IOException io) {
                throw new UncheckedIOException("vector index at " + path + ": " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
    }

    /** Kinds indexed now: a kind stays indexed until it shrinks below half the threshold (no flapping around it). */
    private final Set<String> indexedKinds = new HashSet<>();

    private Indexed sync(List<Batch> batches) throws IOException {
        Map<String, VectorIndex> out = new LinkedHashMap<>();
        Map<Batch, Integer> indexed = new LinkedHashMap<>();
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
            for (int i = 0; i < ok.length; i++) {
                float[] v = b.vectors()[i];
                ok[i] = v != null && fingerprint(v, fp, i); // a missing or non-finite vector is never found
                count += ok[i] ? 1 : 0;
            }
            prints.put(b, fp);
            usable.put(b, ok);
            if (count < threshold || dim <= 0 || dim > EngramHnswFormat.MAX_DIMENSIONS) {
                out.put(b.kind(), VectorIndex.exact(b.vectors()));
            } else {
                indexed.put(b, dim);
            }
        }
        if (indexed.isEmpty() && writer == null && (path == null || !Files.isDirectory(path))) {
            return new Indexed(out, () -> {}); // nothing to index, nothing indexed before
        }
        open();
        long sync = ++syncs;
        for (Map.Entry<Batch, Integer> e : indexed.entrySet()) {
            Batch b = e.getKey();
            String field = field(b.kind(), e.getValue());
            boolean[] ok = usable.get(b);
            long[] fp = prints.get(b);
            Map<String, Entry> known = entries.computeIfAbsent(b.kind(), k -> new HashMap<>());
            for (int i = 0; i < ok.length; i++) {
                if (!ok[i]) {
                    continue;
                }
                String key = b.keys().get(i);
                Entry entry = known.get(key);
                if (entry == null || entry.fingerprint != fp[i]) {
                    if (entry == null) {
                        entry = new Entry(fp[i]);
                        known.put(key, entry);
                        size++;
                    }
                    entry.fingerprint = fp[i];
                    String id = docId(b.kind(), key);
                    Document doc = new Document();
                    doc.add(new StringField(ID, id, Field.Store.YES));
                    doc.add(new SortedDocValuesField(ID, new BytesRef(id)));
                    doc.add(new StringField(KIND, b.kind(), Field.Store.NO));
                    doc.add(new StoredField(FINGERPRINT, fp[i]));
                    doc.add(new KnnFloatVectorField(field, b.vectors()[i], VectorSimilarityFunction.DOT_PRODUCT));
                    writer.updateDocument(new Term(ID, id), doc);
                    written++;
                    uncommitted = true;
                }
                entry.seen = sync;
            }
        }
        // what this snapshot no longer has, including every vector of a kind it searches exactly now
        for (Iterator<Map.Entry<String, Map<String, Entry>>> kinds =
                        entries.entrySet().iterator();
                kinds.hasNext(); ) {
            Map.Entry<String, Map<String, Entry>> kind = kinds.next();
            for (Iterator<Map.Entry<String, Entry>> it =
                            kind.getValue().entrySet().iterator();
                    it.hasNext(); ) {
                Map.Entry<String, Entry> e = it.next();
                if (e.getValue().seen != sync) {
                    writer.deleteDocuments(new Term(ID, docId(kind.getKey(), e.getKey())));
                    it.remove();
                    size--;
                    deleted++;
                    uncommitted = true;
                }
            }
            if (kind.getValue().isEmpty()) {
                kinds.remove();
            }
        }
        DirectoryReader fresh = DirectoryReader.openIfChanged(reader, writer);
        if (fresh != null) {
            reader.decRef();
            reader = fresh;
        }
        if (uncommitted && System.nanoTime() - lastCommitNanos > 30_000_000_000L) {
            commit();
        }
        indexedKinds.clear();
        indexed.keySet().forEach(b -> indexedKinds.add(b.kind()));
        if (indexed.isEmpty()) {
            return new Indexed(out, () -> {});
        }
        DirectoryReader snapshot = reader;
        snapshot.incRef();
        for (Map.Entry<Batch, Integer> e : indexed.entrySet()) {
            Batch b = e.getKey();
            Map<String, Integer> positions = HashMap.newHashMap(b.keys().size());
            boolean[] ok = usable.get(b);
            for (int i = 0; i < b.keys().size(); i++) {
                if (ok[i]) {
                    positions.put(b.keys().get(i), i);
                }
            }
            out.put(b.kind(), new Hnsw(snapshot, field(b.kind(), e.getValue()), positions, b.vectors(), efSearch));
        }
        AtomicBoolean released = new AtomicBoolean();
        return new Indexed(out, () -> {
            if (released.compareAndSet(false, true)) { // once: a second release must not close a reader in use
                try {
                    snapshot.decRef();
                } catch (IOException ex) {
                    throw new UncheckedIOException(ex);
                }
            }
        });
    }

    private void open() throws IOException {
        if (writer != null) {
            return;
        }
        if (path != null) {
            Files.createDirectories(path);
        }
        Directory dir = path == null ? new ByteBuffersDirectory() : FSDirectory.open(path);
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
                                doc.getField(FINGERPRINT).numericValue().longValue());
                        if (loaded.computeIfAbsent(id.substring(0, cut), k -> new HashMap<>())
                                        .put(id.substring(cut + 1), entry)
                                == null) {
                            count++;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            IOUtils.closeWhileHandlingException(r, w, dir);
            throw e;
        }
        directory = dir;
        writer = w;
        reader = r;
        entries.clear();
        entries.putAll(loaded);
        size = count;
        indexedKinds.clear();
        indexedKinds.addAll(loaded.keySet());
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
    }

    private void commit() throws IOException {
        writer.commit();
        uncommitted = false;
        lastCommitNanos = System.nanoTime();
    }

    @Override
    public synchronized void close() throws IOException {
        closed = true;
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

    /** A snapshot's graph search over one kind; falls back to a scan once the snapshot has been released. */
    static final class Hnsw implements VectorIndex {
        private final DirectoryReader reader;
        private final String field;
        private final Map<String, Integer> positions;
        private final float[][] vectors;
        private final int efSearch;
        private volatile VectorIndex exact; // made on first need: after the snapshot's release

        Hnsw(DirectoryReader reader, String field, Map<String, Integer> positions, float[][] vectors, int efSearch) {
            this.reader = reader;
            this.field = field;
            this.positions = positions;
            this.vectors = vectors;
            this.efSearch = efSearch;
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
            return reader.getRefCount() > 0;
        }

        @Override
        public List<Retrieval.Scored> nearest(float[] query, int k) {
            if (k <= 0 || !field.endsWith("_" + query.length) || !reader.tryIncRef()) {
                return scan().nearest(query, k); // a width mismatch gets the scan's clear error
            }
            List<Retrieval.Scored> found;
            try {
                found = search(query, k);
            } catch (IOException | RuntimeException e) {
                try {
                    reader.decRef();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
            }
            try {
                reader.decRef();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return found;
        }

        private List<Retrieval.Scored> search(float[] query, int k) throws IOException {
            int n = Math.min(Math.max(k, efSearch), Math.max(1, positions.size()));
            ScoreDoc[] hits = new IndexSearcher(reader).search(new KnnFloatVectorQuery(field, query, n), n).scoreDocs;
            // keys from doc values, leaf by leaf in doc order (their iterators only go forward)
            Arrays.sort(hits, Comparator.comparingInt((ScoreDoc h) -> h.doc));
            List<LeafReaderContext> leaves = reader.leaves();
            VectorIndex.TopK top = new VectorIndex.TopK(Math.min(k, n));
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
                if (p != null) {
                    top.offer(p, Retrieval.dot(query, vectors[p]));
                }
            }
            return top.drain();
        }
    }
}
