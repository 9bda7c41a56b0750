package dev.engram.retrieval;

/** A passage id with its retrieval score. */
public record ScoredPassage(String passageId, double score) {}
