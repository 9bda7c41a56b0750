package dev.engram.retrieval;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.util.CharTokenizer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherFactory;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The words of a namespace's passages (title and text) in a Lucene index, ranked by Okapi BM25 (k1 1.2, b 0.75): on
 * disk, or in memory. It outlives snapshots: each snapshot build writes the passages that changed and {@link #publish
 * publishes} them, so the heap holds no postings and no build indexes every passage again.
 *
 * <p>Searches read the newest published state and give the passages of one snapshot ({@link #searchFor}): a passage
 * the snapshot does not hold (written after it) is passed over. Tokens are lowercase runs of letters, digits and
 * underscores, for documents and questions alike.
 *
 * <p>Scores are those of the passages in memory, whatever the index's history: Lucene counts a replaced or removed
 * passage in its statistics until a merge drops it, so where the published state has any, the document frequencies
 * and the average length are counted again over the live passages. A namespace written passage by passage therefore
 * ranks exactly as one indexed at once; ties rank by the snapshot's passage order.
 */
public final class PassageWords implements Closeable {

    private static final String ID = "id";
    private static final String TEXT = "text";
    /** A passage's length in tokens, for the statistics over live passages. */
    private static final String LENGTH = "length";

    /** Passages by the words of a question, best first. */
    @FunctionalInterface
    public interface Search {
        List<Retrieval.Scored> top(String query, int k);
    }

    /** The same tokens as {@link Bm25}: lowercase runs of letters, digits and underscores. */
    private static final Analyzer WORDS = new Analyzer() {
        @Override
        protected TokenStreamComponents createComponents(String field) {
            Tokenizer words = CharTokenizer.fromTokenCharPredicate(Bm25::wordChar);
            return new TokenStreamComponents(words, new LowerCaseFilter(words));
        }
    };

    /**
     * The most hits one search reads while passing over passages its snapshot does not hold: a snapshot is at most a
     * build behind what was published, so a few more than asked are almost always enough.
     */
    private static final int MOST_READ = 4096;

    private final Directory directory;
    private final IndexWriter writer;
    private final SearcherManager searchers;
    private final String where;

    private PassageWords(Directory directory, String where) throws IOException {
        this.directory = directory;
        this.where = where;
        IndexWriterConfig config = new IndexWriterConfig(WORDS)
                .setOpenMode(IndexWriterConfig.OpenMode.CREATE) // read again from the stores at each start
                .setSimilarity(new BM25Similarity())
                // each build publishes what it wrote: the buffer holds one build's passages at most
                .setRAMBufferSizeMB(8)
                .setCommitOnClose(false);
        IndexWriter w = null;
        try {
            w = new IndexWriter(directory, config);
            this.writer = w;
            this.searchers = new SearcherManager(w, new SearcherFactory() {
                @Override
                public IndexSearcher newSearcher(IndexReader reader, IndexReader previous) throws IOException {
                    IndexSearcher s = reader.hasDeletions() ? new LiveStatistics(reader) : new IndexSearcher(reader);
                    s.setSimilarity(new BM25Similarity());
                    s.setQueryCache(null); // scored queries, each its own: nothing to cache
                    return s;
                }
            });
        } catch (IOException | RuntimeException e) {
            if (w != null) {
                w.rollback();
            }
            directory.close();
            throw e;
        }
    }

    /** The words kept in {@code dir}, replacing whatever an earlier process left there. */
    public static PassageWords open(Path dir) throws IOException {
        return new PassageWords(FSDirectory.open(dir), dir.toString());
    }

    /** The words kept in memory (on the heap). */
    public static PassageWords inMemory() {
        try {
            return new PassageWords(new ByteBuffersDirectory(), "memory");
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a directory in memory does no I/O
        }
    }

    /** Writes a passage's words, replacing those it had. */
    public void put(String passageId, String title, String text) throws IOException {
        String words = (title == null ? "" : title) + "\n" + (text == null ? "" : text);
        Document d = new Document();
        d.add(new StringField(ID, passageId, Field.Store.NO));
        d.add(new SortedDocValuesField(ID, new BytesRef(passageId)));
        d.add(new TextField(TEXT, words, Field.Store.NO));
        d.add(new NumericDocValuesField(LENGTH, tokens(words)));
        writer.updateDocument(new Term(ID, passageId), d);
    }

    /** How many tokens a text has, as the index counts its length. */
    private static int tokens(String text) throws IOException {
        int n = 0;
        try (TokenStream tokens = WORDS.tokenStream(TEXT, text)) {
            tokens.reset();
            while (tokens.incrementToken()) {
                n++;
            }
            tokens.end();
        }
        return n;
    }

    /**
     * A searcher whose BM25 statistics count only the live passages: each asked term's documents that are not deleted,
     * and the live passages' number and summed length (counted once, when the searcher is made at a publish).
     */
    private static final class LiveStatistics extends IndexSearcher {
        private final long docCount;
        private final long sumLength;

        LiveStatistics(IndexReader reader) throws IOException {
            super(reader);
            long docs = 0;
            long sum = 0;
            for (LeafReaderContext leaf : reader.leaves()) {
                NumericDocValues lengths = leaf.reader().getNumericDocValues(LENGTH);
                Bits live = leaf.reader().getLiveDocs();
                if (lengths == null) {
                    continue;
                }
                for (int doc = lengths.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = lengths.nextDoc()) {
                    if ((live == null || live.get(doc)) && lengths.longValue() > 0) {
                        docs++;
                        sum += lengths.longValue();
                    }
                }
            }
            this.docCount = docs;
            this.sumLength = sum;
        }

        @Override
        public CollectionStatistics collectionStatistics(String field) throws IOException {
            CollectionStatistics all = super.collectionStatistics(field);
            if (all == null || !TEXT.equals(field) || docCount == 0) {
                return all;
            }
            long sumDocFreq = Math.max(docCount, Math.min(all.sumDocFreq(), sumLength));
            return new CollectionStatistics(field, all.maxDoc(), docCount, sumLength, sumDocFreq);
        }

        @Override
        public TermStatistics termStatistics(Term term, int docFreq, long totalTermFreq) throws IOException {
            long liveDocs = 0;
            for (LeafReaderContext leaf : getIndexReader().leaves()) {
                Terms terms = leaf.reader().terms(term.field());
                TermsEnum te = terms == null ? null : terms.iterator();
                if (te == null || !te.seekExact(term.bytes())) {
                    continue;
                }
                Bits live = leaf.reader().getLiveDocs();
                if (live == null) {
                    liveDocs += te.docFreq();
                    continue;
                }
                PostingsEnum docs = te.postings(null, PostingsEnum.NONE);
                for (int doc = docs.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = docs.nextDoc()) {
                    if (live.get(doc)) {
                        liveDocs++;
                    }
                }
            }
            // a term of deleted passages alone matches no live one: its statistics do not matter
            return super.termStatistics(term, liveDocs > 0 ? (int) liveDocs : docFreq, totalTermFreq);
        }
    }

    /** Removes a passage's words. */
    public void remove(String passageId) throws IOException {
        writer.deleteDocuments(new Term(ID, passageId));
    }

    /** Removes every passage's words: a build that reads the whole namespace writes them again. */
    public void clear() throws IOException {
        writer.deleteAll();
    }

    /** Makes what was written since the last call visible to searches; returns once it is. */
    public void publish() throws IOException {
        searchers.maybeRefreshBlocking();
    }

    /**
     * The search of a snapshot: BM25 over the published words, each hit given as {@code ordinal} of its passage's id
     * (below 0: a passage the snapshot does not hold, passed over). Searching once this index is closed (its namespace
     * was let go of while a query still ran) finds nothing.
     */
    public Search searchFor(ToIntFunction<String> ordinal) {
        return (text, k) -> {
            Query query = query(text);
            if (query == null || k <= 0) {
                return List.of();
            }
            IndexSearcher searcher;
            try {
                searcher = searchers.acquire();
            } catch (AlreadyClosedException e) {
                return List.of();
            } catch (IOException e) {
                throw new UncheckedIOException("passage words at " + where + ": " + e.getMessage(), e);
            }
            try {
                return top(searcher, query, k, ordinal);
            } catch (IOException e) {
                throw new UncheckedIOException("passage words at " + where + ": " + e.getMessage(), e);
            } finally {
                try {
                    searchers.release(searcher);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    /**
     * The best {@code k} of the snapshot's passages, score descending and then by passage: hits are read until {@code
     * k} passages of the snapshot are found and every hit tied with the last of them is read too (at most {@link
     * #MOST_READ}).
     */
    private static List<Retrieval.Scored> top(IndexSearcher searcher, Query query, int k, ToIntFunction<String> ordinal)
            throws IOException {
        List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
        // one more than asked: a hit below the k-th shows that no tie with it is left unread
        for (int want = k >= MOST_READ ? k : k + 1; ; want = Math.min(MOST_READ, want * 4)) {
            TopDocs top = searcher.search(query, want);
            List<Retrieval.Scored> out = new ArrayList<>();
            float last = Float.NaN;
            boolean settled = false;
            for (ScoreDoc hit : top.scoreDocs) {
                if (out.size() >= k && hit.score < last) {
                    settled = true; // k found, and every hit tied with the k-th read
                    break;
                }
                LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(hit.doc, leaves));
                SortedDocValues ids = leaf.reader().getSortedDocValues(ID);
                if (ids == null || !ids.advanceExact(hit.doc - leaf.docBase)) {
                    continue;
                }
                int passage = ordinal.applyAsInt(ids.lookupOrd(ids.ordValue()).utf8ToString());
                if (passage >= 0) {
                    out.add(new Retrieval.Scored(passage, hit.score));
                    last = hit.score;
                }
            }
            if (settled || top.scoreDocs.length < want || want >= MOST_READ) {
                out.sort((a, b) -> a.score() != b.score()
                        ? Double.compare(b.score(), a.score())
                        : Integer.compare(a.passage(), b.passage()));
                return out.size() > k ? List.copyOf(out.subList(0, k)) : out;
            }
        }
    }

    /**
     * The question's distinct words, each weighted by how often it has it (as BM25 weighs a query's repeated term);
     * past the most clauses a query may have, the later words are left out. Null: no word.
     */
    static Query query(String text) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        try (TokenStream tokens = WORDS.tokenStream(TEXT, text)) {
            CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
            tokens.reset();
            while (tokens.incrementToken()) {
                String t = term.toString();
                if (counts.containsKey(t) || counts.size() < IndexSearcher.getMaxClauseCount()) {
                    counts.merge(t, 1, Integer::sum);
                }
            }
            tokens.end();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a string is read without I/O
        }
        if (counts.isEmpty()) {
            return null;
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        counts.forEach((t, n) -> {
            Query q = new TermQuery(new Term(TEXT, t));
            b.add(n == 1 ? q : new BoostQuery(q, n), BooleanClause.Occur.SHOULD);
        });
        return b.build();
    }

    /** Passages whose words are published (for tests). */
    int published() throws IOException {
        IndexSearcher s = searchers.acquire();
        try {
            return s.getIndexReader().numDocs();
        } finally {
            searchers.release(s);
        }
    }

    /** Replaced and removed passages the published state still holds until a merge drops them (for tests). */
    int deletedButHeld() throws IOException {
        IndexSearcher s = searchers.acquire();
        try {
            return s.getIndexReader().numDeletedDocs();
        } finally {
            searchers.release(s);
        }
    }

    /** Closes the index; what it wrote is not kept (the next start writes it again from the stores). */
    @Override
    public void close() throws IOException {
        try {
            searchers.close();
        } finally {
            try {
                writer.rollback(); // nothing to commit: the words are read again at each start
            } finally {
                directory.close();
            }
        }
    }
}
