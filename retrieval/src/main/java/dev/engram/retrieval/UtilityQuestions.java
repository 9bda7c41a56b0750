package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A snapshot's utility questions in one list, passage by passage: each question's vector, the passage it belongs to
 * and its vector's key.
 */
final class UtilityQuestions {

    final float[][] vectors;
    final int[] passages;
    final List<String> keys;
    /** The most utility questions any passage has (at least 1). */
    final int mostPerPassage;

    /**
     * @param passageQuestions per passage, its questions' vectors
     * @param questionKeys per passage, its questions' keys as the builder's caller gave them (absent: made here)
     * @param passageList the snapshot's passages, whose ids make the keys not given
     */
    UtilityQuestions(
            float[][][] passageQuestions,
            Map<Integer, List<String>> questionKeys,
            List<MemoryGraph.Passage> passageList) {
        int questionCount = 0;
        for (float[][] qs : passageQuestions) {
            questionCount += qs.length;
        }
        float[][] qv = new float[questionCount][];
        int[] qp = new int[questionCount];
        List<String> qk = new ArrayList<>(questionCount);
        for (int i = 0, at = 0; i < passageQuestions.length; i++) {
            for (int j = 0; j < passageQuestions[i].length; j++, at++) {
                qv[at] = passageQuestions[i][j];
                qp[at] = i;
                List<String> given = questionKeys.get(i);
                qk.add(
                        given != null
                                ? given.get(j)
                                : MemoryGraph.questionKey(passageList.get(i).id(), j));
            }
        }
        int most = 1;
        for (float[][] qs : passageQuestions) {
            most = Math.max(most, qs.length);
        }
        this.mostPerPassage = most;
        this.vectors = qv;
        this.passages = qp;
        this.keys = qk;
    }
}
