package dev.engram.retrieval;

import java.util.Optional;

/** A read-only view of one namespace's memory, as retrieval sees it. */
public interface MemoryView {

    /** Visits every passage vector of the namespace. */
    void forEachPassageVector(VectorVisitor visitor);

    Optional<PassageSummary> passage(String passageId);

    @FunctionalInterface
    interface VectorVisitor {
        void visit(String passageId, float[] vector);
    }

    /** What a retrieval result shows of a passage. */
    record PassageSummary(String passageId, String documentId, String title, String text, String memory) {}
}
