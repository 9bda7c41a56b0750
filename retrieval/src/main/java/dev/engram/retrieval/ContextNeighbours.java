package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Links each passage of a snapshot to its neighbours in its context: the passages before and after it in its document
 * (by offset), or, for a conversation's turn, the turns before and after it in its session (by event time, then as
 * added).
 */
final class ContextNeighbours {

    private ContextNeighbours() {}

    /**
     * Fills {@code previousInContext} and {@code nextInContext} (one entry per passage) with each passage's neighbours
     * in its context, or -1, {@code placeInContext} with its place there (0 for the first) and {@code contextSize} with
     * how many passages its context holds; {@code sessions}: the session of each passage that is a conversation's turn.
     */
    static void link(
            List<Passage> passages,
            IntFunction<MemoryGraphBuilder.Session> sessions,
            int[] previousInContext,
            int[] nextInContext,
            int[] placeInContext,
            int[] contextSize) {
        Arrays.fill(previousInContext, -1);
        Arrays.fill(nextInContext, -1);
        Arrays.fill(contextSize, 1); // a passage alone in its context is its first
        // a document's passages, and a session's turns, by their key: no string made per passage
        Map<String, List<Integer>> documents = new HashMap<>();
        Map<String, List<Integer>> turns = new HashMap<>();
        for (int i = 0; i < passages.size(); i++) {
            MemoryGraphBuilder.Session s = sessions.apply(i);
            (s == null ? documents : turns)
                    .computeIfAbsent(s == null ? passages.get(i).documentId() : s.key(), k -> new ArrayList<>(2))
                    .add(i);
        }
        List<List<Integer>> contexts = new ArrayList<>(documents.values());
        contexts.addAll(turns.values());
        for (List<Integer> members : contexts) {
            if (members.size() < 2) {
                continue;
            }
            // a document's passages by offset; a session's turns by time, then by document id in natural order
            // ("turn-2" before "turn-10"), then by offset: never by the order the snapshot happens to hold them in
            members.sort(Comparator.comparingLong((Integer i) -> {
                        MemoryGraphBuilder.Session s = sessions.apply(i);
                        return s == null ? passages.get(i).start() : s.time();
                    })
                    .thenComparing((Integer i) -> passages.get(i).documentId(), ContextNeighbours::natural)
                    .thenComparingInt(i -> passages.get(i).start())
                    .thenComparing((Integer i) -> passages.get(i).id()));
            for (int k = 1; k < members.size(); k++) {
                previousInContext[members.get(k)] = members.get(k - 1);
                nextInContext[members.get(k - 1)] = members.get(k);
            }
            for (int k = 0; k < members.size(); k++) {
                placeInContext[members.get(k)] = k;
                contextSize[members.get(k)] = members.size();
            }
        }
    }

    /** Compares strings with their runs of digits as numbers: "d1-2" before "d1-10". */
    static int natural(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            char x = a.charAt(i);
            char y = b.charAt(j);
            if (Character.isDigit(x) && Character.isDigit(y)) {
                int ei = i;
                while (ei < a.length() && Character.isDigit(a.charAt(ei))) {
                    ei++;
                }
                int ej = j;
                while (ej < b.length() && Character.isDigit(b.charAt(ej))) {
                    ej++;
                }
                // without leading zeros, a longer run is a larger number
                int si = i;
                while (si < ei - 1 && a.charAt(si) == '0') {
                    si++;
                }
                int sj = j;
                while (sj < ej - 1 && b.charAt(sj) == '0') {
                    sj++;
                }
                int c = Integer.compare(ei - si, ej - sj);
                if (c == 0) {
                    c = a.substring(si, ei).compareTo(b.substring(sj, ej));
                }
                if (c != 0) {
                    return c;
                }
                i = ei;
                j = ej;
            } else {
                if (x != y) {
                    return Character.compare(x, y);
                }
                i++;
                j++;
            }
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
