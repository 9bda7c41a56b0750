package dev.engram.retrieval;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.util.BytesRef;

/**
 * A snapshot's search over one kind: the graph of its reader, leaving out vectors the snapshot no longer has as
 * they were, and a scan of the vectors the graph does not hold yet; falls back to a scan of everything once the
 * snapshot has been released.
 */
final class HnswSearch implements VectorIndex {

    private final ServedReader served;
    private final String field;
    /** The position of a key in the snapshot's batch, -1 when it has none or its vector cannot be found. */
    private final ToIntFunction<String> positions;
    /** How many of the batch's vectors can be found. */
    private final int usable;

    private final Vectors vectors;
    private final int efSearch;
    /** Positions of the vectors the graph does not hold (or holds with other values): scanned. */
    private final int[] tail;
    /** How many of the graph's vectors are stale (changed or gone): found, then left out. */
    private final int staleCount;
    /**
     * Leaves the graph's stale documents out of its search, or null: then the search gathers {@link #staleCount}
     * more candidates instead (a filter costs a pass over the index's documents per search, more than a few extra
     * candidates).
     */
    private final Query stale;

    private volatile VectorIndex exact; // made on first need: after the snapshot's release

    HnswSearch(
            ServedReader served,
            String field,
            ToIntFunction<String> positions,
            int usable,
            Vectors vectors,
            int efSearch,
            int[] tail,
            int staleCount,
            Query stale) {
        this.served = served;
        this.field = field;
        this.positions = positions;
        this.usable = usable;
        this.vectors = vectors;
        this.efSearch = efSearch;
        this.tail = tail;
        this.staleCount = staleCount;
        this.stale = stale == null
                ? null
                : new BooleanQuery.Builder()
                        .add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER)
                        .add(stale, BooleanClause.Occur.MUST_NOT)
                        .build();
    }

    /**
     * The search over a batch's graph, of vectors {@code dim} wide, as {@code served} holds it: {@code usable} tells
     * the batch's vectors that can be found, {@code tail} the positions scanned beside the graph, and {@code stale} the
     * keys of the graph's vectors that are no longer the snapshot's.
     */
    static HnswSearch of(
            ServedReader served,
            VectorIndexer.Batch b,
            int dim,
            boolean[] usable,
            int efSearch,
            int[] tail,
            List<String> stale) {
        int count = 0;
        for (boolean u : usable) {
            count += u ? 1 : 0;
        }
        ToIntFunction<String> positions;
        if (b.locate() != null) {
            ToIntFunction<String> locate = b.locate();
            positions = key -> {
                int p = locate.applyAsInt(key);
                return p >= 0 && p < usable.length && usable[p] ? p : -1;
            };
        } else {
            Map<String, Integer> byKey = HashMap.newHashMap(count);
            for (int i = 0; i < b.keys().size(); i++) {
                if (usable[i]) {
                    byKey.put(b.keys().get(i), i);
                }
            }
            positions = key -> byKey.getOrDefault(key, -1);
        }
        // a few stale vectors: the graph search gathers as many more candidates; many: it filters them out
        Query leftOut = stale.size() <= efSearch
                ? null
                : new TermInSetQuery(
                        HnswFiles.ID,
                        stale.stream()
                                .map(key -> new BytesRef(HnswFiles.docId(b.kind(), key)))
                                .toList());
        return new HnswSearch(
                served,
                HnswFiles.field(b.kind(), dim),
                positions,
                count,
                b.vectors(),
                efSearch,
                tail,
                stale.size(),
                leftOut);
    }

    @Override
    public String kind() {
        return "hnsw";
    }

    /** A search gathers {@code max(k, efSearch)} candidates: the same ones for every {@code k} up to efSearch. */
    @Override
    public int headsAgreeUpTo() {
        return efSearch;
    }

    /** Vectors scanned beside the graph. */
    int tail() {
        return served.state().complete() ? 0 : tail.length;
    }

    private VectorIndex scan() {
        VectorIndex e = exact;
        if (e == null) {
            e = VectorIndex.exact(vectors);
            exact = e;
        }
        return e;
    }

    /** Whether graph searches are still possible (false once the snapshot's reader is closed). */
    boolean searchable() {
        return served.state().reader().getRefCount() > 0;
    }

    @Override
    public List<Retrieval.Scored> nearest(float[] query, int k) {
        if (served.broken()) {
            return scan().nearest(query, k);
        }
        ServedReader.State state = served.state();
        if (!state.reader().tryIncRef()) {
            state = served.state(); // completed meanwhile, or released
            if (!state.reader().tryIncRef()) {
                return scan().nearest(query, k);
            }
        }
        DirectoryReader reader = state.reader();
        if (k <= 0 || !field.endsWith("_" + query.length)) {
            try {
                reader.decRef();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return scan().nearest(query, k); // a width mismatch gets the scan's clear error
        }
        List<Retrieval.Scored> found;
        try {
            found = search(reader, state.complete(), query, k);
        } catch (IOException | RuntimeException | InternalError e) {
            // the index's files cannot be read (damaged, gone, a disk that fails; a fault in a mapped file is an
            // InternalError): the snapshot holds every vector, so it answers by a scan, and the store starts
            // the index again
            try {
                reader.decRef();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            served.damaged(e);
            return scan().nearest(query, k);
        }
        try {
            reader.decRef();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    private List<Retrieval.Scored> search(DirectoryReader reader, boolean complete, float[] query, int k)
            throws IOException {
        int n = Math.min(Math.max(k, efSearch), Math.max(1, usable));
        int stales = complete ? 0 : staleCount;
        Query filter = complete ? null : stale;
        int gathered = filter == null ? n + stales : n;
        ScoreDoc[] hits = new IndexSearcher(reader)
                .search(new KnnFloatVectorQuery(field, query, gathered, filter), gathered)
                .scoreDocs;
        // keys from doc values, leaf by leaf in doc order (their iterators only go forward)
        Arrays.sort(hits, Comparator.comparingInt((ScoreDoc h) -> h.doc));
        List<LeafReaderContext> leaves = reader.leaves();
        VectorIndex.TopK top = new VectorIndex.TopK(Math.min(k, usable));
        SortedDocValues ids = null;
        int leaf = -1;
        for (ScoreDoc hit : hits) {
            int at = ReaderUtil.subIndex(hit.doc, leaves);
            if (at != leaf) {
                leaf = at;
                ids = leaves.get(at).reader().getSortedDocValues(HnswFiles.ID);
            }
            int doc = hit.doc - leaves.get(at).docBase;
            if (ids == null || !ids.advanceExact(doc)) {
                continue;
            }
            String id = ids.lookupOrd(ids.ordValue()).utf8ToString();
            int p = positions.applyAsInt(id.substring(id.indexOf('\u0000') + 1));
            if (p >= 0 && (stales == 0 || !inTail(p))) {
                top.offer(p, vectors.dot(p, query)); // a changed vector is offered once, from the tail
            }
        }
        if (!complete) {
            for (int p : tail) {
                top.offer(p, vectors.dot(p, query));
            }
        }
        return top.drain();
    }

    private boolean inTail(int p) {
        return Arrays.binarySearch(tail, p) >= 0; // ascending: positions in batch order
    }
}
