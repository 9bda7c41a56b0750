package dev.engram.schemas;

/**
 * Progress of a document through the pipeline: accepted, passages being understood, fully in memory, or
 * withdrawn (deleted; kept as a tombstone for audit).
 */
public enum DocumentStatus {
    PENDING,
    READING,
    VERIFIED,
    ARCHIVED
}
