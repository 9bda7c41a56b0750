package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * Lays a snapshot's vectors out as the batches its {@link VectorIndexer} indexes, one per kind, each vector keyed
 * stably across snapshots: passages, facts, entities, utility questions, and the passages without questions. Each
 * batch finds a key's position from the snapshot's own maps of passages and entities (a fact's or a question's key
 * names its passage and its ordinal there), not from a map of every vector's key.
 */
final class VectorBatches {

    final List<VectorIndexer.Batch> batches;
    /** Whether no passage has utility questions: then there is no batch of bare passages, they are all passages. */
    final boolean allBare;

    /**
     * @param passageIds the snapshot's passages' ids, in their order
     * @param passageIndex each passage's position by id (-1: none)
     */
    VectorBatches(
            List<String> passageIds,
            ToIntFunction<String> passageIndex,
            Vectors passageVectors,
            long[][] passageQuestions,
            List<MemoryGraph.Fact> facts,
            List<String> factKeys,
            Vectors factVectors,
            List<String> entityIds,
            ToIntFunction<String> entityIndex,
            Vectors entityVectors,
            List<String> questionKeys,
            Vectors questionVectors) {
        int passageCount = passageIds.size();
        int bareCount = 0;
        for (long[] qs : passageQuestions) {
            bareCount += qs.length == 0 ? 1 : 0;
        }
        Vectors bare = passageVectors.only(i -> passageQuestions[i].length == 0);
        ToIntFunction<String> passage = passageIndex;
        int[] factStart = new int[passageCount];
        int[] factCount = new int[passageCount];
        for (int f = facts.size() - 1; f >= 0; f--) {
            factStart[facts.get(f).passage()] = f;
            factCount[facts.get(f).passage()]++;
        }
        int[] questionStart = new int[passageCount];
        int[] questionCount = new int[passageCount];
        for (int i = 0, at = 0; i < questionStart.length; at += passageQuestions[i].length, i++) {
            questionStart[i] = at;
            questionCount[i] = passageQuestions[i].length;
        }
        List<String> factKeyList = List.copyOf(factKeys);
        List<VectorIndexer.Batch> all = new ArrayList<>(List.of(
                new VectorIndexer.Batch("passage", passageIds, passageVectors, passage),
                new VectorIndexer.Batch(
                        "fact",
                        factKeyList,
                        factVectors,
                        new Ordinals(factKeyList, passageIndex, factStart, factCount, 'f', 1)),
                new VectorIndexer.Batch("entity", entityIds, entityVectors, entityIndex),
                new VectorIndexer.Batch(
                        "question",
                        questionKeys,
                        questionVectors,
                        new Ordinals(questionKeys, passageIndex, questionStart, questionCount, 'q', 0))));
        this.allBare = bareCount == passageCount;
        if (!allBare) {
            all.add(new VectorIndexer.Batch("bare_passage", passageIds, bare, passage));
        }
        this.batches = all;
    }

    /**
     * Finds a key made as {@code <passage id>#<tag><ordinal>} ({@link MemoryGraph#factKey}, {@link
     * MemoryGraph#questionKey}: a passage's keys numbered from the first ordinal without gaps, as the builder's callers
     * must give them) at its passage's first position plus its ordinal, and checks it is there. A key whose passage
     * the snapshot does not have, or whose ordinal is past its passage's count, is not in it (a stale key of the
     * index); one that is not where its ordinal says (a builder's caller that added a passage's keys apart from each
     * other) is looked up in a map of the keys, made once.
     */
    private static final class Ordinals implements ToIntFunction<String> {
        private final List<String> keys;
        private final ToIntFunction<String> passageIndex;
        private final int[] start;
        private final int[] count;
        private final char tag;
        private final int first;
        private volatile Map<String, Integer> byKey;

        /**
         * @param start per passage, the position of its first key
         * @param count per passage, how many keys it has
         * @param first the ordinal of a passage's first key
         */
        Ordinals(List<String> keys, ToIntFunction<String> passageIndex, int[] start, int[] count, char tag, int first) {
            this.keys = keys;
            this.passageIndex = passageIndex;
            this.start = start;
            this.count = count;
            this.tag = tag;
            this.first = first;
        }

        @Override
        public int applyAsInt(String key) {
            int hash = key.lastIndexOf('#');
            if (hash <= 0 || hash + 2 >= key.length() || key.charAt(hash + 1) != tag) {
                return mapped(key);
            }
            int ordinal = 0;
            for (int i = hash + 2; i < key.length(); i++) {
                char c = key.charAt(i);
                if (c < '0' || c > '9' || i - hash > 10) {
                    return mapped(key);
                }
                ordinal = ordinal * 10 + (c - '0');
            }
            int p = passageIndex.applyAsInt(key.substring(0, hash));
            if (p < 0 || ordinal < first || ordinal - first >= count[p]) {
                return -1; // its passage is not in the snapshot, or has fewer of these now
            }
            int at = start[p] + ordinal - first;
            return keys.get(at).equals(key) ? at : mapped(key);
        }

        private int mapped(String key) {
            Map<String, Integer> m = byKey;
            if (m == null) {
                m = HashMap.newHashMap(keys.size());
                for (int i = 0; i < keys.size(); i++) {
                    m.put(keys.get(i), i);
                }
                byKey = m;
            }
            return m.getOrDefault(key, -1);
        }
    }
}
