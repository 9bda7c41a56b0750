package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A snapshot's utility questions in one list, passage by passage: each question's vector, the passage it belongs to
 * and its vector's key.
 */
final class UtilityQuestions {

    final Vectors vectors;
    final int[] passages;
    final List<String> keys;
    /** The most utility questions any passage has (at least 1). */
    final int mostPerPassage;

    /**
     * @param arena where the questions' vectors are
     * @param passageQuestions per passage, the handles of its questions' vectors
     * @param questionKeys per passage, its questions' keys as the builder's caller gave them (absent: made here)
     * @param passageList the snapshot's passages, whose ids make the keys not given
     */
    UtilityQuestions(
            VectorArena arena,
            long[][] passageQuestions,
            IntFunction<List<String>> questionKeys,
            List<Passage> passageList) {
        int questionCount = 0;
        for (long[] qs : passageQuestions) {
            questionCount += qs.length;
        }
        long[] qv = new long[questionCount];
        int[] qp = new int[questionCount];
        List<String> qk = new ArrayList<>(questionCount);
        for (int i = 0, at = 0; i < passageQuestions.length; i++) {
            for (int j = 0; j < passageQuestions[i].length; j++, at++) {
                qv[at] = passageQuestions[i][j];
                qp[at] = i;
                List<String> given = questionKeys.apply(i);
                qk.add(
                        given != null
                                ? given.get(j)
                                : MemoryGraph.questionKey(passageList.get(i).id(), j));
            }
        }
        int most = 1;
        for (long[] qs : passageQuestions) {
            most = Math.max(most, qs.length);
        }
        this.mostPerPassage = most;
        this.vectors = new Vectors(arena, qv);
        this.passages = qp;
        this.keys = qk;
    }
}
