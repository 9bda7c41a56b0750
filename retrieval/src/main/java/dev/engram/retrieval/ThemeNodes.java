package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Makes a snapshot's GEM-RAG summary nodes from the eigen-themes its builder was given. */
final class ThemeNodes {

    private ThemeNodes() {}

    /**
     * The themes that keep at least one member among the snapshot's passages, each with its questions: its members'
     * questions moved towards the theme's centroid (the centroid itself when they have none).
     */
    static List<MemoryGraph.ThemeNode> of(
            List<MemoryGraphBuilder.PendingTheme> themes, Vectors passageVectors, long[][] passageQuestions) {
        VectorArena arena = passageVectors.arena();
        List<MemoryGraph.ThemeNode> ts = new ArrayList<>();
        for (MemoryGraphBuilder.PendingTheme t : themes) {
            int[] members = Arrays.stream(t.members())
                    .filter(m -> m >= 0 && m < passageVectors.size())
                    .toArray();
            if (members.length == 0) {
                continue;
            }
            // A summary node's questions: each member's questions moved towards the theme's centroid.
            float[] centroid = new float[passageVectors.length(members[0])];
            for (int m : members) {
                float[] member = passageVectors.get(m);
                for (int k = 0; k < Math.min(centroid.length, member.length); k++) {
                    centroid[k] += member[k];
                }
            }
            MemoryGraph.normalize(centroid);
            List<float[]> qv = new ArrayList<>();
            for (int m : members) {
                for (long question : passageQuestions[m]) {
                    float[] q = arena.get(question);
                    float[] v = new float[centroid.length];
                    for (int k = 0; k < v.length; k++) {
                        v[k] = (q[k] + centroid[k]) / 2;
                    }
                    MemoryGraph.normalize(v);
                    qv.add(v);
                }
            }
            if (qv.isEmpty()) {
                qv.add(centroid);
            }
            ts.add(new MemoryGraph.ThemeNode(
                    t.rank(), t.eigenvalue(), members, t.summary(), qv.toArray(new float[0][])));
        }
        return List.copyOf(ts);
    }
}
