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
 * read back after a restart. Graph parameters are Lucene's defaults (M 16, beam width 100).
 */
public final class EngramHnswFormat extends KnnVectorsFormat {

    /** The widest embedding indexed; wider ones are searched exactly. */
    public static final int MAX_DIMENSIONS = 4096;

    private final KnnVectorsFormat delegate = new Lucene99HnswVectorsFormat();

    public EngramHnswFormat() {
        super("EngramHnsw");
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
}
