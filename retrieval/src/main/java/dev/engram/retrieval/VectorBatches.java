package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;

/**
 * Lays a snapshot's vectors out as the batches its {@link VectorIndexer} indexes, one per kind, each vector keyed
 * stably across snapshots: passages, facts, entities, utility questions, and the passages without questions.
 */
final class VectorBatches {

    final List<VectorIndexer.Batch> batches;
    /** Whether no passage has utility questions: then there is no batch of bare passages, they are all passages. */
    final boolean allBare;

    VectorBatches(
            List<MemoryGraph.Passage> passages,
            float[][] passageVectors,
            float[][][] passageQuestions,
            List<String> factKeys,
            float[][] factVectors,
            List<String> entityIds,
            float[][] entityVectors,
            List<String> questionKeys,
            float[][] questionVectors) {
        List<String> passageIds = passages.stream().map(MemoryGraph.Passage::id).toList();
        float[][] bare = new float[passages.size()][];
        int bareCount = 0;
        for (int i = 0; i < bare.length; i++) {
            if (passageQuestions[i].length == 0) {
                bare[i] = passageVectors[i];
                bareCount++;
            }
        }
        List<VectorIndexer.Batch> all = new ArrayList<>(List.of(
                new VectorIndexer.Batch("passage", passageIds, passageVectors),
                new VectorIndexer.Batch("fact", List.copyOf(factKeys), factVectors),
                new VectorIndexer.Batch("entity", entityIds, entityVectors),
                new VectorIndexer.Batch("question", questionKeys, questionVectors)));
        this.allBare = bareCount == passages.size();
        if (!allBare) {
            all.add(new VectorIndexer.Batch("bare_passage", passageIds, bare));
        }
        this.batches = all;
    }
}
