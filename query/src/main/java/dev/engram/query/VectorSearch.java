package dev.engram.query;

import dev.engram.retrieval.EngramHnswFormat;
import java.util.Objects;

/**
 * Approximate nearest-neighbour search: a kind of vector (passages, facts, entities, questions) of a namespace is
 * indexed in an HNSW graph from {@code minVectors} vectors on and searched exactly below; a graph search gathers
 * {@code ef} candidates. The graphs have {@code maxConn} neighbours per node, and a node's insertion keeps {@code
 * beamWidth} candidates while it looks for them. With {@code backgroundWrites}, a snapshot is served before its new
 * vectors are inserted into the graphs (it scans them meanwhile) and a background thread inserts them. With a
 * {@code quantization}, the graphs are built and searched over quantized copies of the vectors, and a search's
 * candidates are scored again exactly.
 */
public record VectorSearch(
        int minVectors,
        int ef,
        int maxConn,
        int beamWidth,
        boolean backgroundWrites,
        EngramHnswFormat.Quantization quantization) {

    public VectorSearch {
        Objects.requireNonNull(quantization, "quantization");
    }

    /** Graphs over the full vectors. */
    public VectorSearch(int minVectors, int ef, int maxConn, int beamWidth, boolean backgroundWrites) {
        this(minVectors, ef, maxConn, beamWidth, backgroundWrites, EngramHnswFormat.Quantization.NONE);
    }

    /** The format the graphs are written in. */
    public EngramHnswFormat format() {
        return EngramHnswFormat.of(maxConn, beamWidth, quantization);
    }

    /** With the default graph parameters, each snapshot inserting its own vectors before it is served. */
    public VectorSearch(int minVectors, int ef) {
        this(minVectors, ef, EngramHnswFormat.DEFAULT_MAX_CONN, EngramHnswFormat.DEFAULT_BEAM_WIDTH);
    }

    /** Each snapshot inserting its own vectors before it is served. */
    public VectorSearch(int minVectors, int ef, int maxConn, int beamWidth) {
        this(minVectors, ef, maxConn, beamWidth, false);
    }
}
