package dev.engram.query;

import dev.engram.retrieval.EngramHnswFormat;

/**
 * Approximate nearest-neighbour search: a kind of vector (passages, facts, entities, questions) of a namespace is
 * indexed in an HNSW graph from {@code minVectors} vectors on and searched exactly below; a graph search gathers
 * {@code ef} candidates. The graphs have {@code maxConn} neighbours per node, and a node's insertion keeps {@code
 * beamWidth} candidates while it looks for them.
 */
public record VectorSearch(int minVectors, int ef, int maxConn, int beamWidth) {

    /** With the default graph parameters. */
    public VectorSearch(int minVectors, int ef) {
        this(minVectors, ef, EngramHnswFormat.DEFAULT_MAX_CONN, EngramHnswFormat.DEFAULT_BEAM_WIDTH);
    }
}
