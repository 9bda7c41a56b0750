package dev.engram.retrieval;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
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
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.IOUtils;

/**
 * The Lucene side of a namespace's HNSW index: its directory (on disk or in memory), writer and current reader, opened
 * on first need (a damaged index is started again empty) and let go of after a failure or at the close; its documents,
 * one per vector, and when written changes are committed. Reading the index back on open hands what it holds to the
 * {@link KnownVectors}. Not thread-safe: {@link HnswVectors} calls it under its lock, except what its writing thread
 * alone touches.
 */
final class HnswFiles {

    static final String ID = "id";
    private static final String KIND = "kind";
    private static final String FINGERPRINT = "fp";

    private final Path path;
    private final EngramHnswFormat format;
    private final HnswVectors.Directories directories;
    /** Written changes are committed when the last commit is older than this. */
    private final long commitEveryNanos;

    private final KnownVectors known;

    private Directory directory;
    private IndexWriter writer;
    private DirectoryReader reader; // this store's reference; each snapshot takes one more
    /** Touched by the writing thread only. */
    private long lastCommitNanos = System.nanoTime();

    private boolean uncommitted;

    HnswFiles(
            Path path,
            EngramHnswFormat format,
            HnswVectors.Directories directories,
            long commitEveryNanos,
            KnownVectors known) {
        this.path = path;
        this.format = format;
        this.directories = directories;
        this.commitEveryNanos = commitEveryNanos;
        this.known = known;
    }

    /** Where the index lives, or null when it is kept in memory. */
    Path path() {
        return path;
    }

    /** Whether the writer and its reader are open. */
    boolean isOpen() {
        return writer != null;
    }

    /** Whether an index on disk may be there to read: its directory exists. */
    boolean onDisk() {
        return path != null && Files.isDirectory(path);
    }

    IndexWriter writer() {
        return writer;
    }

    /** The index's current reader (null while it is not open). */
    DirectoryReader reader() {
        return reader;
    }

    /** Makes {@code fresh} the index's current reader; returns the one it replaces, which the caller lets go of. */
    DirectoryReader replaceReader(DirectoryReader fresh) {
        DirectoryReader old = reader;
        reader = fresh;
        return old;
    }

    /** Opens the index unless it is open; one unreadable on disk is started again empty, and the listener hears it. */
    void open(HnswVectors.Listener listener) throws IOException {
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
        Map<String, KnownVectors.Known> loaded = new HashMap<>();
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
                        if (loaded.computeIfAbsent(id.substring(0, cut), k -> new KnownVectors.Known())
                                .put(
                                        id.substring(cut + 1),
                                        doc.getField(FINGERPRINT).numericValue().longValue(),
                                        null,
                                        VectorArena.NONE)) {
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
        known.loaded(loaded, count);
        uncommitted = false;
    }

    /** Lets go of the writer, its reader and directory after a failure, keeping what was committed on disk. */
    void reset(Exception cause) {
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
    void forget() {
        writer = null;
        reader = null;
        directory = null;
        known.forget();
    }

    /** Deletes the files of the index on disk, if there is one (it is not open). */
    void deleteAll() throws IOException {
        if (path != null && Files.isDirectory(path)) {
            try (Directory dir = directories.open(path)) {
                for (String file : dir.listAll()) {
                    dir.deleteFile(file);
                }
            }
        }
    }

    /** Closes the writer (committing what is pending), its reader and directory, if they are open. */
    void close() throws IOException {
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

    /** Writes one vector of a kind, under its key, with its fingerprint, into its field (replacing the one there). */
    static void write(IndexWriter w, String kind, String key, long fingerprint, String field, float[] vector)
            throws IOException {
        String id = docId(kind, key);
        Document doc = new Document();
        doc.add(new StringField(ID, id, Field.Store.YES));
        doc.add(new SortedDocValuesField(ID, new BytesRef(id)));
        doc.add(new StringField(KIND, kind, Field.Store.NO));
        doc.add(new StoredField(FINGERPRINT, fingerprint));
        doc.add(new KnnFloatVectorField(field, vector, VectorSimilarityFunction.DOT_PRODUCT));
        w.updateDocument(new Term(ID, id), doc);
    }

    /** Deletes the vector of a kind under its key. */
    static void delete(IndexWriter w, String kind, String key) throws IOException {
        w.deleteDocuments(new Term(ID, docId(kind, key)));
    }

    /** Notes that changes were written (or not) since the last commit; by the writing thread. */
    void changed(boolean any) {
        uncommitted |= any;
    }

    /** Commits written changes if the last commit is older than the interval; by the writing thread. */
    void commitIfDue(IndexWriter w) throws IOException {
        if (uncommitted && System.nanoTime() - lastCommitNanos >= commitEveryNanos) {
            w.commit();
            uncommitted = false;
            lastCommitNanos = System.nanoTime();
        }
    }

    static String docId(String kind, String key) {
        return kind + '\u0000' + key;
    }

    /** One vector field per kind and width, so that a change of embedder never mixes widths in one graph. */
    static String field(String kind, int dim) {
        return kind + "_" + dim;
    }
}
