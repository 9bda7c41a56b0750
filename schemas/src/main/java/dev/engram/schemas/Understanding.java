package dev.engram.schemas;

/** What the understand step learned from one passage: the extraction and its embeddings. */
public record Understanding(Extraction extraction, Embeddings embeddings, String embedder) {}
