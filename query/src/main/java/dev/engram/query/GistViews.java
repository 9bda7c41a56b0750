package dev.engram.query;

import dev.engram.retrieval.EpisodicWindows;
import dev.engram.stores.DocumentGist;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** A document's gist and episodic windows, derived from its stored entries when read. */
public final class GistViews {

    /** Lead sentences in a gist. */
    static final int GIST_SENTENCES = 3;

    private GistViews() {}

    /**
     * What a document's entries add up to: its gist — the lead sentences of the passages closest to the centroid of
     * its passage vectors ({@code vectorOf}, null when unknown), in reading order — and its episodic windows.
     */
    public static DocumentGist.View view(DocumentGist g, Function<String, float[]> vectorOf) {
        List<DocumentGist.Entry> entries = g.entries();
        List<float[]> vs = new ArrayList<>();
        for (DocumentGist.Entry e : entries) {
            vs.add(vectorOf.apply(e.passageId()));
        }
        double[] centroid = null;
        for (float[] v : vs) {
            if (v != null) {
                if (centroid == null) {
                    centroid = new double[v.length];
                }
                if (v.length == centroid.length) {
                    for (int i = 0; i < v.length; i++) {
                        centroid[i] += v[i];
                    }
                }
            }
        }
        List<Integer> order = new ArrayList<>();
        double[] score = new double[entries.size()];
        for (int i = 0; i < entries.size(); i++) {
            order.add(i);
            float[] v = vs.get(i);
            if (centroid != null && v != null && v.length == centroid.length) {
                for (int k = 0; k < v.length; k++) {
                    score[i] += v[k] * centroid[k];
                }
            }
        }
        order.sort((a, b) -> score[a] != score[b] ? Double.compare(score[b], score[a]) : Integer.compare(a, b));
        List<Integer> chosen = new ArrayList<>(order.subList(0, Math.min(GIST_SENTENCES, order.size())));
        chosen.sort(Integer::compare);
        List<String> gist = new ArrayList<>();
        for (int i : chosen) {
            if (!entries.get(i).lead().isBlank()) {
                gist.add(entries.get(i).lead());
            }
        }
        // Episodic windows over the passages in reading order.
        List<DocumentGist.Window> windows = new ArrayList<>();
        for (int[] r : EpisodicWindows.ranges(entries.size())) {
            List<String> ids = new ArrayList<>();
            StringBuilder summary = new StringBuilder();
            for (int i = r[0]; i < r[1]; i++) {
                ids.add(entries.get(i).passageId());
                if (!entries.get(i).lead().isBlank()) {
                    summary.append(summary.isEmpty() ? "" : " ")
                            .append(entries.get(i).lead());
                }
            }
            windows.add(new DocumentGist.Window(windows.size(), ids, summary.toString()));
        }
        return new DocumentGist.View(gist, EpisodicWindows.size(entries.size()), windows);
    }
}
