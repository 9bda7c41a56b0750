package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.VectorArena;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namespaces' HNSW vector indexes, open while their snapshots are cached, and the thread that writes snapshots'
 * new vectors into them.
 */
final class VectorIndexes {

    /** Logged under the loader's name, as the snapshots the indexes serve. */
    private static final Logger LOG = LoggerFactory.getLogger(GraphLoader.class);

    private final ConcurrentHashMap<String, HnswVectors> vectors = new ConcurrentHashMap<>();
    /** Writes snapshots' new vectors into the namespaces' HNSW graphs while the snapshots are served. */
    private final ExecutorService indexing = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-vector-index");
        t.setDaemon(true);
        return t;
    });

    /** The folder of the arenas under the index directory; '@' is not allowed in a namespace's name. */
    static final String ARENAS = "@arenas";

    private final Path indexDir;
    private final VectorSearch search;
    private final Meters meters;

    /**
     * Indexes kept under {@code indexDir} (a directory per namespace), or in memory when it is null, as {@code search}
     * says to build them.
     */
    VectorIndexes(Path indexDir, VectorSearch search, Meters meters) {
        this.indexDir = indexDir;
        this.search = search;
        this.meters = meters;
        if (indexDir != null) {
            clearArenas(indexDir.resolve(ARENAS));
        }
    }

    /** Vectors the namespaces' latest snapshots scan beside their graphs while the background writes them. */
    double waiting() {
        return vectors.values().stream().mapToLong(HnswVectors::waiting).sum();
    }

    /** The namespace's vector indexes; they outlive snapshots, so each snapshot writes only what changed. */
    HnswVectors of(String ns) {
        return vectors.computeIfAbsent(
                ns,
                n -> new HnswVectors(
                        indexDir == null ? null : indexDir.resolve(n),
                        search.minVectors(),
                        search.ef(),
                        search.format(),
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

    /**
     * A new, empty arena for a namespace's snapshot vectors: a file under the index directory (in a folder whose name
     * no namespace can have), or the heap when indexes are kept in memory.
     */
    VectorArena newArena(String ns) {
        if (indexDir == null) {
            return VectorArena.onHeap();
        }
        try {
            return VectorArena.mapped(indexDir.resolve(ARENAS), ns);
        } catch (UncheckedIOException e) {
            LOG.warn("namespace {}: no file for its snapshot vectors, they are kept in the heap: {}", ns, e.toString());
            return VectorArena.onHeap();
        }
    }

    /** The namespaces whose vector indexes are open. */
    Set<String> open() {
        return Set.copyOf(vectors.keySet());
    }

    /** Closes the namespace's indexes, if open; they stay on disk, and its next snapshot opens them again. */
    void close(String ns) {
        HnswVectors v = vectors.remove(ns);
        if (v != null) {
            try {
                v.close();
            } catch (IOException | RuntimeException e) {
                LOG.warn("closing the vector index of namespace {}: {}", ns, e.toString());
            }
        }
    }

    /** Closes every namespace's indexes. */
    void closeAll() {
        open().forEach(this::close);
    }

    /** Deletes what an earlier process left of its arenas: they are scratch, read again from the stores. */
    private static void clearArenas(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            LOG.warn("could not clear the vector arenas of an earlier run in {}: {}", dir, e.toString());
        }
    }

    /** Stops the writing thread: a write still running stops at its next vector when its index closes. */
    void shutdown() {
        indexing.shutdown();
    }
}
