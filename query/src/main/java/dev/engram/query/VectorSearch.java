package dev.engram.query;

/**
 * Approximate nearest-neighbour search: a kind of vector (passages, facts, entities, questions) of a namespace is
 * indexed in an HNSW graph from {@code minVectors} vectors on and searched exactly below; a graph search gathers
 * {@code ef} candidates.
 */
public record VectorSearch(int minVectors, int ef) {}
