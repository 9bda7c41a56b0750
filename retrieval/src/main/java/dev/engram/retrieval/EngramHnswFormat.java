package dev.engram.retrieval;

import java.io.IOException;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.KnnVectorsWriter;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.index.SegmentReadState;
import org.apache.lucene.index.SegmentWriteState;

/**
 * Lucene's HNSW vectors format with room for wider embeddings: Lucene's own stops at 1024 dimensions, below common
 * LLM embedding sizes (1536, 3072). Registered by name (META-INF/services) so that segments written with it can be
 * read back after a restart. The graph's parameters (neighbours per node, beam width while building) shape only how
 * new graphs are built: a segment is read the same whatever they were when it was written.
 */
public final class EngramHnswFormat extends KnnVectorsFormat {

    /** The widest embedding indexed; wider ones are searched exactly. */
    public static final int MAX_DIMENSIONS = 4096;

    /** Neighbours per node: Lucene's default. */
    public static final int DEFAULT_MAX_CONN = 16;

    /**
     * Candidates a node's insertion keeps while it searches for its neighbours. Lucene's default is 100; building
     * costs about in proportion, and most of a large namespace's snapshot builds is inserting new vectors. With 64 a
     * graph builds in about half to three quarters of the time, and a search, with its candidates rescored exactly,
     * loses up to about one point of recall@10 on clustered synthetic vectors, more on harder data (see {@code
     * bench/README.md}, vector search).
     */
    public static final int DEFAULT_BEAM_WIDTH = 64;

    private final KnnVectorsFormat delegate;
    private final int maxConn;
    private final int beamWidth;

    /** With the default graph parameters; also how Lucene makes it to read segments back. */
    public EngramHnswFormat() {
        this(DEFAULT_MAX_CONN, DEFAULT_BEAM_WIDTH);
    }

    public EngramHnswFormat(int maxConn, int beamWidth) {
        super("EngramHnsw");
        this.delegate = new Lucene99HnswVectorsFormat(maxConn, beamWidth);
        this.maxConn = maxConn;
        this.beamWidth = beamWidth;
    }

    @Override
    public KnnVectorsWriter fieldsWriter(SegmentWriteState state) throws IOException {
        return delegate.fieldsWriter(state);
    }

    @Override
    public KnnVectorsReader fieldsReader(SegmentReadState state) throws IOException {
        return delegate.fieldsReader(state);
    }

    @Override
    public int getMaxDimensions(String fieldName) {
        return MAX_DIMENSIONS;
    }

    @Override
    public String toString() {
        return "EngramHnsw(maxConn=" + maxConn + ", beamWidth=" + beamWidth + ")";
    }
}
