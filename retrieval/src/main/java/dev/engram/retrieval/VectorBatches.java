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
            Vectors passageVectors,
            long[][] passageQuestions,
            List<String> factKeys,
            Vectors factVectors,
            List<String> entityIds,
            Vectors entityVectors,
            List<String> questionKeys,
            Vectors questionVectors) {
        List<String> passageIds = passages.stream().map(MemoryGraph.Passage::id).toList();
        int bareCount = 0;
        for (long[] qs : passageQuestions) {
            bareCount += qs.length == 0 ? 1 : 0;
        }
        Vectors bare = passageVectors.only(i -> passageQuestions[i].length == 0);
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
