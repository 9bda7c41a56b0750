package dev.engram.processors;

import dev.engram.retrieval.EigenThemes;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.UnicodeText;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.Keys;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import dev.engram.stores.ThemeSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * The memory's gists, kept incrementally: a document's entries change with each passage that arrives or leaves (only
 * that entry is touched, nothing is read or understood again; its gist and windows are derived when read, see
 * {@link #view}), and a namespace's eigen-themes are recomputed only when enough of it has changed since the last
 * time.
 *
 * <p>Summaries stored here are made of the lead sentences of passage memories (which the LLM extractor writes
 * abstractively, the embedded one extractively); no LLM is called in the memory step, whose transactions must stay
 * short. With an LLM configured, the query layer writes abstractive theme summaries on request. Every write goes through
 * the record's {@link MemoryTransaction}.
 */
public final class Gists {

    /** Lead sentences in an extractive theme summary (of its strongest passages). */
    static final int THEME_SUMMARY_LEADS = 3;
    /** Themes kept per namespace (GEM-RAG measured two to be best; more are cheap to keep and show). */
    static final int THEMES = 4;
    /** Passages per theme (the top components of its eigenvector). */
    static final int THEME_PASSAGES = 5;
    /** Eigen-gap cutoff of GEM-RAG's Remark 2, for the number of essential themes. */
    static final double THEME_GAP = 0.1;
    /** Themes are recomputed after this many passage changes, or a tenth of the namespace if more. */
    static final int THEME_MIN_CHANGES = 16;
    /** The theme graph is built over at most this many passages (by passage id, a uniform sample). */
    static final int THEME_MAX_PASSAGES = 4000;

    private static final int LEAD_MAX_CHARS = 300;

    private Gists() {}

    /** A passage joined its document's memory. */
    static void added(MemoryTransaction tx, StoredPassage p) {
        DocumentGist g = tx.gists().get(Keys.of(p.namespace(), p.documentId()));
        List<DocumentGist.Entry> entries = new ArrayList<>(g == null ? List.of() : g.entries());
        entries.removeIf(e -> e.passageId().equals(p.passageId()));
        entries.add(new DocumentGist.Entry(p.passageId(), p.ordinal(), p.start(), lead(p.memory())));
        store(tx, p.namespace(), p.documentId(), p.title(), entries);
    }

    /** A passage left its document's memory. */
    static void removed(MemoryTransaction tx, String ns, String documentId, String passageId) {
        DocumentGist g = tx.gists().get(Keys.of(ns, documentId));
        if (g == null) {
            return;
        }
        List<DocumentGist.Entry> entries = new ArrayList<>(g.entries());
        entries.removeIf(e -> e.passageId().equals(passageId));
        store(tx, ns, documentId, g.title(), entries);
    }

    private static void store(
            MemoryTransaction tx, String ns, String documentId, String title, List<DocumentGist.Entry> entries) {
        if (entries.isEmpty()) {
            tx.gists().delete(Keys.of(ns, documentId));
            return;
        }
        entries.sort(Comparator.comparingInt(DocumentGist.Entry::start)
                .thenComparingInt(DocumentGist.Entry::ordinal)
                .thenComparing(DocumentGist.Entry::passageId));
        tx.gists().put(Keys.of(ns, documentId), new DocumentGist(ns, documentId, title, entries, tx.now()));
    }

    /** True when the namespace changed enough since its themes were computed. */
    static boolean themesDue(long changesSinceThemes, long passageCount) {
        return changesSinceThemes >= Math.max(THEME_MIN_CHANGES, passageCount / 10);
    }

    /** Recomputes the namespace's eigen-themes from its passages' vectors and utility questions, as of its version. */
    static void recomputeThemes(MemoryTransaction tx) {
        String ns = tx.namespace();
        long version = tx.state().version();
        Instant now = tx.now();
        List<String> ids = new ArrayList<>();
        List<float[]> passageVectors = new ArrayList<>();
        List<float[]> questionSums = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = tx.vectors().prefixScan(Keys.prefix(ns))) {
            while (it.hasNext() && ids.size() < THEME_MAX_PASSAGES) {
                var kv = it.next();
                float[] v = StoredVectors.decode(kv.value);
                Embeddings emb = tx.embeddings().get(kv.key);
                float[] sum = null;
                if (emb != null) {
                    for (float[] q : emb.questions()) {
                        if (q.length != v.length) {
                            continue;
                        }
                        if (sum == null) {
                            sum = new float[v.length];
                        }
                        for (int i = 0; i < v.length; i++) {
                            sum[i] += q[i];
                        }
                    }
                }
                ids.add(Keys.last(kv.key));
                passageVectors.add(v);
                questionSums.add(sum);
            }
        }
        // Vectors of another model (a namespace being re-embedded) do not belong in one graph: keep the majority's.
        Map<Integer, Integer> dims = new HashMap<>();
        passageVectors.forEach(v -> dims.merge(v.length, 1, Integer::sum));
        int dim = dims.entrySet().stream()
                .max(Map.Entry.comparingByValue())
                .map(Map.Entry::getKey)
                .orElse(0);
        for (int i = passageVectors.size() - 1; i >= 0; i--) {
            if (passageVectors.get(i).length != dim) {
                ids.remove(i);
                passageVectors.remove(i);
                questionSums.remove(i);
            }
        }
        EigenThemes.Result result = EigenThemes.compute(
                passageVectors.toArray(new float[0][]),
                questionSums.toArray(new float[0][]),
                THEMES,
                THEME_PASSAGES,
                THEME_GAP);
        List<ThemeSet.Theme> out = new ArrayList<>();
        for (EigenThemes.Theme t : result.themes()) {
            List<String> members = new ArrayList<>();
            List<Double> weights = new ArrayList<>();
            for (int i = 0; i < t.members().length; i++) {
                members.add(ids.get(t.members()[i]));
                weights.add(t.weights()[i]);
            }
            out.add(theme(tx, out.size() + 1, t.eigenvalue(), members, weights));
        }
        tx.themes().put(ns, new ThemeSet(ns, version, ids.size(), result.essential(), out, now));
    }

    /**
     * A theme over its member passages (strongest first): its extractive summary, the lead sentences of its first
     * members, and a utility question of each member.
     */
    private static ThemeSet.Theme theme(
            MemoryTransaction tx, int rank, double eigenvalue, List<String> members, List<Double> weights) {
        StringBuilder summary = new StringBuilder();
        List<String> questions = new ArrayList<>();
        for (int i = 0; i < members.size(); i++) {
            StoredPassage p = tx.passages().get(Keys.of(tx.namespace(), members.get(i)));
            if (p == null) {
                continue;
            }
            if (i < THEME_SUMMARY_LEADS) {
                String lead = lead(p.memory());
                if (!lead.isBlank()) {
                    summary.append(summary.isEmpty() ? "" : " ").append(lead);
                }
            }
            if (!p.extraction().questions().isEmpty() && questions.size() < THEME_PASSAGES) {
                questions.add(p.extraction().questions().get(0));
            }
        }
        return new ThemeSet.Theme(rank, eigenvalue, members, weights, summary.toString(), questions);
    }

    /**
     * A passage left memory: it leaves the themes at once, and the summaries and questions of the themes it was in
     * are made again from the members that remain (the themes themselves are recomputed when due); a theme left
     * without passages leaves too.
     */
    static void retractFromThemes(MemoryTransaction tx, String passageId) {
        ThemeSet set = tx.themes().get(tx.namespace());
        if (set == null || set.themes().stream().noneMatch(t -> t.passageIds().contains(passageId))) {
            return;
        }
        List<ThemeSet.Theme> out = new ArrayList<>();
        for (ThemeSet.Theme t : set.themes()) {
            int at = t.passageIds().indexOf(passageId);
            if (at < 0) {
                out.add(t);
                continue;
            }
            List<String> members = new ArrayList<>(t.passageIds());
            List<Double> weights = new ArrayList<>(t.weights());
            members.remove(at);
            if (at < weights.size()) {
                weights.remove(at);
            }
            if (!members.isEmpty()) { // a theme without passages is no theme: it leaves with its last one
                out.add(theme(tx, t.rank(), t.eigenvalue(), members, weights));
            }
        }
        if (out.isEmpty()) {
            tx.themes().delete(tx.namespace());
            return;
        }
        tx.themes()
                .put(
                        tx.namespace(),
                        new ThemeSet(
                                set.namespace(),
                                set.version(),
                                set.passages(),
                                set.essential(),
                                out,
                                set.computedAt()));
    }

    /**
     * Where the first sentence ends: before the white space that follows a {@code .}, {@code !} or {@code ?} and
     * precedes a capital, a digit or an opening quote; the text's length when none does. One pass over the text.
     */
    static int firstSentenceEnd(String text) {
        for (int i = 1; i < text.length(); i++) {
            char before = text.charAt(i - 1);
            if ((before != '.' && before != '!' && before != '?') || !UnicodeText.space(text.charAt(i))) {
                continue;
            }
            int j = i;
            while (j < text.length() && UnicodeText.space(text.charAt(j))) {
                j++;
            }
            if (j < text.length()) {
                int next = text.codePointAt(j);
                if (Character.getType(next) == Character.UPPERCASE_LETTER
                        || UnicodeText.number(next)
                        || next == '"'
                        || next == '“') {
                    return i;
                }
            }
            i = j - 1; // what lies between was white space: no sentence ends there
        }
        return text.length();
    }

    /** The first sentence of a memory, at most a few hundred characters. */
    static String lead(String memory) {
        if (memory == null) {
            return "";
        }
        String text = memory.strip();
        String first = text.substring(0, firstSentenceEnd(text));
        return first.length() <= LEAD_MAX_CHARS
                ? first
                : first.substring(0, LEAD_MAX_CHARS - 1).strip() + "…";
    }
}
