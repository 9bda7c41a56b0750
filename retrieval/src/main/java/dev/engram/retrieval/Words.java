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
 * Short texts of a namespace by key, in a Lucene index ranked by Okapi BM25 (k1 1.2, b 0.75): each passage's title and
 * text, or the names of its knowledge units (entities, facts, relations). On disk, or in memory. It outlives snapshots:
 * each snapshot build writes the texts that changed and {@link #publish publishes} them, so the heap holds no postings
 * and no build indexes every text again.
 *
 * <p>Searches read the newest published state and give the texts of one snapshot ({@link #searchFor}): a key the
 * snapshot does not hold (written after it) is passed over. Tokens are lowercase runs of letters, digits and
 * underscores, for texts and questions alike.
 *
 * <p>Scores are those of the texts held now, whatever the index's history: Lucene counts a replaced or removed text in
 * its statistics until a merge drops it, so where the published state has any, the document frequencies and the
 * average length are counted again over the live texts. Texts written one by one therefore rank exactly as the same
 * texts indexed at once; ties rank by the snapshot's order.
 */
public final class Words implements Closeable {

    private static final String ID = "id";
    /** What a text belongs to (a passage, for its units): all of a group's texts are removed at once. */
    private static final String GROUP = "group";

    private static final String TEXT = "text";
    /** A text's length in tokens, for the statistics over live texts. */
    private static final String LENGTH = "length";

    /** Texts by the words of a question, best first, as the snapshot's ordinals. */
    @FunctionalInterface
    public interface Search {
        List<Retrieval.Scored> top(String query, int k);
    }

    /** Lowercase runs of letters, digits and underscores ({@code [\\p{L}\\p{N}_]+}, lowercased). */
    private static final Analyzer WORDS = new Analyzer() {
        @Override
        protected TokenStreamComponents createComponents(String field) {
            Tokenizer words = CharTokenizer.fromTokenCharPredicate(Words::wordChar);
            return new TokenStreamComponents(words, new LowerCaseFilter(words));
        }
    };

    /**
     * The most hits one search reads while passing over texts its snapshot does not hold: a snapshot is at most a
     * build behind what was published, so a few more than asked are almost always enough.
     */
    private static final int MOST_READ = 4096;

    private final Directory directory;
    private final IndexWriter writer;
    private final SearcherManager searchers;
    private final String where;

    private Words(Directory directory, String where) throws IOException {
        this.directory = directory;
        this.where = where;
        IndexWriterConfig config = new IndexWriterConfig(WORDS)
                .setOpenMode(IndexWriterConfig.OpenMode.CREATE) // read again from the stores at each start
                .setSimilarity(new BM25Similarity())
                // each build publishes what it wrote: the buffer holds one build's texts at most
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
    public static Words open(Path dir) throws IOException {
        return new Words(FSDirectory.open(dir), dir.toString());
    }

    /** The words kept in memory (on the heap). */
    public static Words inMemory() {
        try {
            return new Words(new ByteBuffersDirectory(), "memory");
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a directory in memory does no I/O
        }
    }

    /** Writes a passage's words (its title and text) under its id, replacing those it had. */
    public void putPassage(String passageId, String title, String text) throws IOException {
        put(passageId, null, (title == null ? "" : title) + "\n" + (text == null ? "" : text));
    }

    /** Writes the text of {@code key}, replacing the one it had; {@code group} (may be null) is what it belongs to. */
    public void put(String key, String group, String text) throws IOException {
        Document d = new Document();
        d.add(new StringField(ID, key, Field.Store.NO));
        d.add(new SortedDocValuesField(ID, new BytesRef(key)));
        if (group != null) {
            d.add(new StringField(GROUP, group, Field.Store.NO));
        }
        d.add(new TextField(TEXT, text, Field.Store.NO));
        d.add(new NumericDocValuesField(LENGTH, length(text)));
        writer.updateDocument(new Term(ID, key), d);
    }

    /** Removes every text of a group. */
    public void removeGroup(String group) throws IOException {
        writer.deleteDocuments(new Term(GROUP, group));
    }

    /** The tokens of a text, in order: what the index reads of texts and questions. */
    public static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        try (TokenStream tokens = WORDS.tokenStream(TEXT, text)) {
            CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
            tokens.reset();
            while (tokens.incrementToken()) {
                out.add(term.toString());
            }
            tokens.end();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a string is read without I/O
        }
        return out;
    }

    /** Letters, digits and underscores make tokens; anything else parts them. */
    static boolean wordChar(int cp) {
        if (cp < 128) {
            return (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '_' || (cp >= 'A' && cp <= 'Z');
        }
        return switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER,
                    Character.LOWERCASE_LETTER,
                    Character.TITLECASE_LETTER,
                    Character.MODIFIER_LETTER,
                    Character.OTHER_LETTER,
                    Character.DECIMAL_DIGIT_NUMBER,
                    Character.LETTER_NUMBER,
                    Character.OTHER_NUMBER -> true;
            default -> false;
        };
    }

    /** How many tokens a text has, as the index counts its length. */
    private static int length(String text) throws IOException {
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
     * A searcher whose BM25 statistics count only the live texts: each asked term's documents that are not deleted, and
     * the live texts' number and summed length (counted once, when the searcher is made at a publish).
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
            // a term of deleted texts alone matches no live one: its statistics do not matter
            return super.termStatistics(term, liveDocs > 0 ? (int) liveDocs : docFreq, totalTermFreq);
        }
    }

    /** Removes the text of a key (a passage's words). */
    public void remove(String key) throws IOException {
        writer.deleteDocuments(new Term(ID, key));
    }

    /** Removes every text: a build that reads the whole namespace writes them again. */
    public void clear() throws IOException {
        writer.deleteAll();
    }

    /** Makes what was written since the last call visible to searches; returns once it is. */
    public void publish() throws IOException {
        searchers.maybeRefreshBlocking();
    }

    /**
     * The search of a snapshot: BM25 over the published texts, each hit given as {@code ordinal} of its key (below 0:
     * a text the snapshot does not hold, passed over). Searching once this index is closed (its namespace was let go of
     * while a query still ran) finds nothing.
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
                throw new UncheckedIOException("words at " + where + ": " + e.getMessage(), e);
            }
            try {
                return top(searcher, query, k, ordinal);
            } catch (IOException e) {
                throw new UncheckedIOException("words at " + where + ": " + e.getMessage(), e);
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
     * The best {@code k} of the snapshot's texts, score descending and then by ordinal: hits are read until {@code k}
     * texts of the snapshot are found and every hit tied with the last of them is read too (at most {@link
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
        for (String t : tokens(text)) {
            if (counts.containsKey(t) || counts.size() < IndexSearcher.getMaxClauseCount()) {
                counts.merge(t, 1, Integer::sum);
            }
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

    /** Replaced and removed texts the published state still holds until a merge drops them (for tests). */
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
