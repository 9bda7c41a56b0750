package dev.engram.retrieval;

import java.io.IOException;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.KnnVectorsWriter;
import org.apache.lucene.codecs.lucene104.Lucene104HnswScalarQuantizedVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.index.SegmentReadState;
import org.apache.lucene.index.SegmentWriteState;
import org.apache.lucene.util.quantization.QuantizedByteVectorValues.ScalarEncoding;

/**
 * Lucene's HNSW vectors format with room for wider embeddings: Lucene's own stops at 1024 dimensions, below common
 * LLM embedding sizes (1536, 3072). Registered by name (META-INF/services) so that segments written with it can be
 * read back after a restart. The graph's parameters (neighbours per node, beam width while building) shape only how
 * new graphs are built: a segment is read the same whatever they were when it was written.
 *
 * <p>With a {@link Quantization}, the graph is built and searched over quantized copies of the vectors (Lucene's
 * optimized scalar quantization), beside the full ones; each quantization is a format of its own name, so that an index
 * holds segments of several and reads each back as written.
 */
public class EngramHnswFormat extends KnnVectorsFormat {

    /** How the vectors a graph is built and searched over are stored beside the full ones. */
    public enum Quantization {
        /** Full 32-bit floats only. */
        NONE("none", "EngramHnsw", null),
        /** 8 bits a dimension: a quarter of the floats' bytes. */
        INT8("int8", "EngramHnswInt8", ScalarEncoding.UNSIGNED_BYTE),
        /** 4 bits a dimension: an eighth. */
        INT4("int4", "EngramHnswInt4", ScalarEncoding.PACKED_NIBBLE),
        /** 1 bit a dimension, the query at 4 bits: a 32nd. */
        BIT1("bit1", "EngramHnswBit1", ScalarEncoding.SINGLE_BIT_QUERY_NIBBLE);

        private final String wireName;
        private final String formatName;
        private final ScalarEncoding encoding;

        Quantization(String wireName, String formatName, ScalarEncoding encoding) {
            this.wireName = wireName;
            this.formatName = formatName;
            this.encoding = encoding;
        }

        /** Its name in settings: none, int8, int4 or bit1. */
        public String wireName() {
            return wireName;
        }

        /** The quantization of a setting's name; an unknown name is refused, naming the ones there are. */
        public static Quantization of(String name) {
            for (Quantization q : values()) {
                if (q.wireName.equalsIgnoreCase(name.strip())) {
                    return q;
                }
            }
            throw new IllegalArgumentException("unknown vector quantization '" + name + "' (none, int8, int4 or bit1)");
        }
    }

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
    private final Quantization quantization;
    private final int maxConn;
    private final int beamWidth;

    /** With the default graph parameters; also how Lucene makes it to read segments back. */
    public EngramHnswFormat() {
        this(DEFAULT_MAX_CONN, DEFAULT_BEAM_WIDTH);
    }

    public EngramHnswFormat(int maxConn, int beamWidth) {
        this(Quantization.NONE, maxConn, beamWidth);
    }

    private EngramHnswFormat(Quantization quantization, int maxConn, int beamWidth) {
        super(quantization.formatName);
        this.delegate = quantization == Quantization.NONE
                ? new Lucene99HnswVectorsFormat(maxConn, beamWidth)
                : new Lucene104HnswScalarQuantizedVectorsFormat(quantization.encoding, maxConn, beamWidth);
        this.quantization = quantization;
        this.maxConn = maxConn;
        this.beamWidth = beamWidth;
    }

    /** The format that writes graphs of these parameters over vectors of this quantization. */
    public static EngramHnswFormat of(int maxConn, int beamWidth, Quantization quantization) {
        return switch (quantization) {
            case NONE -> new EngramHnswFormat(maxConn, beamWidth);
            case INT8 -> new Int8(maxConn, beamWidth);
            case INT4 -> new Int4(maxConn, beamWidth);
            case BIT1 -> new Bit1(maxConn, beamWidth);
        };
    }

    public Quantization quantization() {
        return quantization;
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
        return getName() + "(maxConn=" + maxConn + ", beamWidth=" + beamWidth + ")";
    }

    /** Graphs over vectors quantized to 8 bits a dimension. */
    public static final class Int8 extends EngramHnswFormat {
        /** With the default graph parameters; how Lucene makes it to read segments back. */
        public Int8() {
            this(DEFAULT_MAX_CONN, DEFAULT_BEAM_WIDTH);
        }

        Int8(int maxConn, int beamWidth) {
            super(Quantization.INT8, maxConn, beamWidth);
        }
    }

    /** Graphs over vectors quantized to 4 bits a dimension. */
    public static final class Int4 extends EngramHnswFormat {
        /** With the default graph parameters; how Lucene makes it to read segments back. */
        public Int4() {
            this(DEFAULT_MAX_CONN, DEFAULT_BEAM_WIDTH);
        }

        Int4(int maxConn, int beamWidth) {
            super(Quantization.INT4, maxConn, beamWidth);
        }
    }

    /** Graphs over vectors quantized to 1 bit a dimension. */
    public static final class Bit1 extends EngramHnswFormat {
        /** With the default graph parameters; how Lucene makes it to read segments back. */
        public Bit1() {
            this(DEFAULT_MAX_CONN, DEFAULT_BEAM_WIDTH);
        }

        Bit1(int maxConn, int beamWidth) {
            super(Quantization.BIT1, maxConn, beamWidth);
        }
    }
}
