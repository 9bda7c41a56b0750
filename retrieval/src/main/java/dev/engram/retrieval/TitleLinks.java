package dev.engram.retrieval;

import dev.engram.schemas.NormalizedNames;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A passage that names another document's title links to that document, as an encyclopedia's article links the
 * articles it mentions: "an Australian soldier and politician" names the article "Politician", which the extractor
 * did not take for an entity (a common noun) and so the bridge step cannot reach. The snapshot keeps each titled
 * passage's title as a 64-bit key, sorted; a question reads the texts of its few best passages, looks up every run of
 * up to {@link #LONGEST} words and checks each hit against the title itself. Conversations' turns are titled by speaker
 * and time, which a turn's text does not repeat, so they link nowhere.
 */
final class TitleLinks {

    /** The most words a title can have and still be linked. */
    static final int LONGEST = 8;

    /** The most passages a question's links score, over all titles it reached. */
    static final int MOST_CANDIDATES = 200;

    /** The most passages one title adds (a long document's first ones). */
    static final int MOST_PER_TITLE = 50;

    private static final long OFFSET = 0xcbf29ce484222325L;
    private static final long PRIME = 0x100000001b3L;

    /** The top 31 bits of each titled passage's key, ascending; hits are checked against the full key and title. */
    private final int[] keys;

    private final int[] passages;

    TitleLinks(List<Passage> all) {
        int n = 0;
        for (Passage p : all) {
            if (p.titleKey() != 0) {
                n++;
            }
        }
        long[] packed = new long[n];
        int at = 0;
        for (int i = 0; i < all.size(); i++) {
            long key = all.get(i).titleKey();
            if (key != 0) {
                // the key's top 31 bits, then the passage: sorting the pairs sorts by key, passages in order
                packed[at++] = ((long) short31(key) << 32) | i;
            }
        }
        Arrays.sort(packed);
        this.keys = new int[n];
        this.passages = new int[n];
        for (int i = 0; i < n; i++) {
            keys[i] = (int) (packed[i] >>> 32);
            passages[i] = (int) packed[i];
        }
    }

    /** About the heap the table takes. */
    long bytes() {
        return 8L * keys.length + 32;
    }

    /**
     * The key of a title, or 0 when it links nowhere: its normalized form ({@link NormalizedNames}, without a closing
     * aside, as the bridge step reads titles) must have a letter, at least three letters or digits and at most {@link
     * #LONGEST} words ("2023" and "O.K." do not link).
     */
    static long keyOf(String title) {
        String name = normalized(title);
        if (name.chars().filter(c -> c != ' ').count() < 3 || name.chars().noneMatch(Character::isLetter)) {
            return 0;
        }
        int words = 1;
        for (int i = 0; i < name.length(); i++) {
            if (name.charAt(i) == ' ' && ++words > LONGEST) {
                return 0;
            }
        }
        long h = hash(OFFSET, name, 0, name.length());
        return h == 0 ? 1 : h;
    }

    /** What the sorted table keeps of a key: its top 31 bits (hits are checked against the title itself). */
    private static int short31(long key) {
        return (int) (key >>> 33);
    }

    static String normalized(String title) {
        return NormalizedNames.of(Bridge.withoutAside(title));
    }

    private static long hash(long h, String s, int from, int to) {
        for (int i = from; i < to; i++) {
            h = (h ^ s.charAt(i)) * PRIME;
        }
        return h;
    }

    /**
     * The passages of the documents whose titles the texts of {@code from} name, other than the documents of {@code
     * from} themselves; at most {@link #MOST_CANDIDATES}, in the order their titles are first named.
     */
    List<Integer> linked(MemoryGraph g, int[] from) {
        if (keys.length == 0 || from.length == 0) {
            return List.of();
        }
        Set<String> own = new HashSet<>();
        for (int p : from) {
            own.add(g.passage(p).documentId());
        }
        Set<Integer> out = new LinkedHashSet<>();
        Set<Long> seen = new HashSet<>();
        for (int p : from) {
            Passage.Texts t = g.passage(p).texts();
            String words = t.text() == null ? "" : NormalizedNames.of(t.text());
            int[] starts = wordStarts(words);
            for (int w = 0; w < starts.length && out.size() < MOST_CANDIDATES; w++) {
                long h = OFFSET;
                for (int len = 1; len <= LONGEST && w + len <= starts.length; len++) {
                    int end = w + len < starts.length ? starts[w + len] - 1 : words.length();
                    h = hash(len == 1 ? h : hash(h, " ", 0, 1), words, starts[w + len - 1], end);
                    long full = h == 0 ? 1 : h;
                    int key = short31(full);
                    if (Arrays.binarySearch(keys, key) < 0 || !seen.add(full)) {
                        continue;
                    }
                    addPages(g, key, full, words.substring(starts[w], end), own, out);
                }
            }
        }
        return new ArrayList<>(out);
    }

    /**
     * Adds the passages titled {@code phrase}, whose key is {@code full} ({@code key} in the table): a passage's own key
     * is compared first, its title read only when the keys agree, and compared too (keys may collide).
     */
    private void addPages(MemoryGraph g, int key, long full, String phrase, Set<String> own, Set<Integer> out) {
        int from = Arrays.binarySearch(keys, key);
        while (from > 0 && keys[from - 1] == key) {
            from--;
        }
        int to = from;
        while (to < keys.length && keys[to] == key) {
            to++;
        }
        int same = 0; // the passages that bear the title's full key: its document's (and a collision's, if ever)
        for (int i = from; i < to; i++) {
            if (g.passage(passages[i]).titleKey() == full) {
                same++;
            }
        }
        String title = null;
        int added = 0;
        for (int i = from; i < to && out.size() < MOST_CANDIDATES && added < MOST_PER_TITLE; i++) {
            Passage page = g.passage(passages[i]);
            if (page.titleKey() != full) {
                continue;
            }
            String t = page.title();
            if (!phrase.equals(normalized(t))) {
                continue; // keys collided
            }
            if (title == null) {
                title = t;
                if (common(g, title, same)) {
                    return;
                }
            }
            if (!own.contains(page.documentId()) && out.add(passages[i])) {
                added++;
            }
        }
    }

    /**
     * Whether every word of a title (as the namespace's BM25 index reads words) is in more than half of the namespace's
     * other passages (those not titled by it, {@code titled}, whose texts carry their title), and in more than two: a
     * document titled "The" or "Is", or a manual's page titled by the product's name, would be named by nearly every
     * passage; such a title is a function word or a hub of this namespace, not a link (read from the namespace's own
     * word counts).
     */
    private static boolean common(MemoryGraph g, String title, int titled) {
        int others = g.passageCount() - titled;
        for (String word : Bm25.tokens(Bridge.withoutAside(title))) {
            if (g.bm25.documentFrequency(word) - titled <= Math.max(2, others / 2)) {
                return false;
            }
        }
        return true;
    }

    private static int[] wordStarts(String words) {
        if (words.isEmpty()) {
            return new int[0];
        }
        int n = 1;
        for (int i = 0; i < words.length(); i++) {
            if (words.charAt(i) == ' ') {
                n++;
            }
        }
        int[] starts = new int[n];
        int at = 1;
        for (int i = 0; i < words.length(); i++) {
            if (words.charAt(i) == ' ') {
                starts[at++] = i + 1;
            }
        }
        return starts;
    }

    /** The linked passages by their cosine to {@code query}, best first. */
    static List<Retrieval.Scored> byMeaning(MemoryGraph g, float[] query, List<Integer> linked) {
        List<Retrieval.Scored> out = new ArrayList<>(linked.size());
        for (int p : linked) {
            if (g.passageVectors.length(p) == query.length) {
                out.add(new Retrieval.Scored(p, g.passageVectors.dot(p, query)));
            }
        }
        out.sort((a, b) -> a.score() != b.score()
                ? Double.compare(b.score(), a.score())
                : Integer.compare(a.passage(), b.passage()));
        return out;
    }
}
