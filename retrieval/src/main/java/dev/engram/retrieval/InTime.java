package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The passages of the time a question names ({@link QuestionTime}), ranked by meaning: "What did Maria share on 16
 * June, 2023?" reads the passages whose event time is that day, most similar first. At most {@link #MAX_SCANNED} of
 * them are scored (a question naming a year over a namespace of a million dated passages must stay bounded): those of
 * the window nearest its middle. No window, or no dated passage in it, gives an empty ranking.
 */
final class InTime {

    /** The most passages of one window that are scored exactly. */
    static final int MAX_SCANNED = 20_000;

    private InTime() {}

    static List<Retrieval.Scored> rank(MemoryGraph g, float[] query, QuestionTime.Window window, int depth) {
        if (window == null || g.datedPassages() == 0) {
            return List.of();
        }
        int[] in = g.passagesBetween(window.from().toEpochDay(), window.to().toEpochDay());
        int from = 0;
        int to = in.length;
        if (in.length > MAX_SCANNED) {
            from = (in.length - MAX_SCANNED) / 2;
            to = from + MAX_SCANNED;
        }
        List<Retrieval.Scored> out = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            out.add(new Retrieval.Scored(in[i], g.passageVectors.dot(in[i], query)));
        }
        out.sort((a, b) -> a.score() != b.score()
                ? Double.compare(b.score(), a.score())
                : Integer.compare(a.passage(), b.passage()));
        return out.size() > depth ? List.copyOf(out.subList(0, depth)) : out;
    }

    /** What the explanation says of the window: its days, its words and how many passages it holds. */
    static Map<String, Object> explain(MemoryGraph g, QuestionTime.Window window) {
        return Map.of(
                "from", window.from().toString(),
                "to", window.to().toString(),
                "expression", window.expression(),
                "passages",
                        g.passagesBetween(
                                        window.from().toEpochDay(), window.to().toEpochDay())
                                .length);
    }
}
