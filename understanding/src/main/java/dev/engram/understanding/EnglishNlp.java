package dev.engram.understanding;

import dev.engram.schemas.UnicodeText;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import opennlp.tools.postag.POSModel;
import opennlp.tools.postag.POSTaggerME;
import opennlp.tools.sentdetect.SentenceDetectorME;
import opennlp.tools.sentdetect.SentenceModel;
import opennlp.tools.tokenize.TokenizerME;
import opennlp.tools.tokenize.TokenizerModel;
import opennlp.tools.tokenize.WhitespaceTokenizer;
import opennlp.tools.util.Span;

/**
 * English sentence splitting, tokenization and Universal Dependencies part-of-speech tagging with the Apache OpenNLP
 * UD-EWT models from Maven Central. Models load once; the (non-thread-safe) taggers are lent to one call at a time.
 */
public final class EnglishNlp {

    /** A token with its UTF-16 offsets in the analysed text and its UPOS tag. */
    public record Token(String text, int start, int end, String tag) {
        public boolean is(String upos) {
            return tag.equals(upos);
        }
    }

    /** A sentence: its offsets and tokens. */
    public record Sentence(int start, int end, List<Token> tokens) {}

    private static final String SENTENCE_MODEL = "/opennlp-en-ud-ewt-sentence-1.3-2.5.4.bin";
    private static final String TOKEN_MODEL = "/opennlp-en-ud-ewt-tokens-1.3-2.5.4.bin";
    private static final String POS_MODEL = "/opennlp-en-ud-ewt-pos-1.3-2.5.4.bin";

    private record Pipeline(SentenceDetectorME sentences, TokenizerME tokenizer, POSTaggerME tagger) {}

    /**
     * Pipelines not in use. A pipeline is not thread-safe and costs a few milliseconds to make (the tagger parses its
     * feature descriptor), so each analysis borrows one and gives it back: a thread per request (the HTTP API's
     * virtual threads) would otherwise make one per query. At most {@link #KEPT} idle ones are kept.
     */
    private final BlockingQueue<Pipeline> idle;

    private static final int KEPT = 4 * Runtime.getRuntime().availableProcessors();

    private final SentenceModel sentenceModel;
    private final TokenizerModel tokenModel;
    private final POSModel posModel;
    private final AtomicInteger made = new AtomicInteger();

    public EnglishNlp() {
        this.sentenceModel = load(SENTENCE_MODEL, SentenceModel::new);
        this.tokenModel = load(TOKEN_MODEL, TokenizerModel::new);
        this.posModel = load(POS_MODEL, POSModel::new);
        this.idle = new ArrayBlockingQueue<>(KEPT);
    }

    /** How many pipelines were made so far. */
    int pipelinesMade() {
        return made.get();
    }

    public List<Sentence> analyse(String text) {
        Pipeline p = idle.poll();
        if (p == null) {
            made.incrementAndGet();
            p = new Pipeline(
                    new SentenceDetectorME(sentenceModel), new TokenizerME(tokenModel), new POSTaggerME(posModel));
        }
        try {
            return analyse(p, text);
        } finally {
            idle.offer(p); // dropped when enough are kept
        }
    }

    /**
     * The longest run of words tagged at once. The tagger's beam search copies its history at every word, so its time
     * grows with the square of a sentence's length; a "sentence" of thousands of words (a list, a table, a flood of
     * quotes) is tagged in windows of this many words, each knowing nothing of the one before.
     */
    static final int TAGGED_AT_ONCE = 256;

    /**
     * The longest run of characters without white space that the tokenizer splits. It weighs every position inside
     * such a run with the run's prefix and suffix as context, so its time grows with the square of the run's length;
     * a longer run (a URL, a hash, a base64 blob, a hostile document's single "word") is cut only at its ends: the
     * marks before and after its first and last letter or digit are tokens of their own, the rest is one token.
     */
    static final int SPLIT_AT_MOST = 256;

    private static Span[] tokenize(TokenizerME tokenizer, String sentence) {
        Span[] runs = WhitespaceTokenizer.INSTANCE.tokenizePos(sentence);
        boolean longRun = false;
        for (Span r : runs) {
            longRun |= r.length() > SPLIT_AT_MOST;
        }
        if (!longRun) {
            return tokenizer.tokenizePos(sentence);
        }
        List<Span> out = new ArrayList<>();
        for (Span r : runs) {
            if (r.length() > SPLIT_AT_MOST) {
                peeled(sentence, r.getStart(), r.getEnd(), out);
                continue;
            }
            for (Span t : tokenizer.tokenizePos(sentence.substring(r.getStart(), r.getEnd()))) {
                out.add(new Span(r.getStart() + t.getStart(), r.getStart() + t.getEnd()));
            }
        }
        return out.toArray(Span[]::new);
    }

    /** A long run as tokens: each mark before its first and after its last letter or digit, and what lies between. */
    private static void peeled(String text, int start, int end, List<Span> out) {
        int from = start;
        while (from < end && !UnicodeText.letterOrNumber(text.codePointAt(from))) {
            int next = from + Character.charCount(text.codePointAt(from));
            out.add(new Span(from, next));
            from = next;
        }
        int to = end;
        List<Span> tail = new ArrayList<>();
        while (to > from && !UnicodeText.letterOrNumber(text.codePointBefore(to))) {
            int previous = to - Character.charCount(text.codePointBefore(to));
            tail.add(new Span(previous, to));
            to = previous;
        }
        if (from < to) {
            out.add(new Span(from, to));
        }
        Collections.reverse(tail);
        out.addAll(tail);
    }

    private static String[] tag(POSTaggerME tagger, String[] words) {
        if (words.length <= TAGGED_AT_ONCE) {
            return tagger.tag(words);
        }
        String[] tags = new String[words.length];
        for (int from = 0; from < words.length; from += TAGGED_AT_ONCE) {
            int to = Math.min(words.length, from + TAGGED_AT_ONCE);
            System.arraycopy(tagger.tag(Arrays.copyOfRange(words, from, to)), 0, tags, from, to - from);
        }
        return tags;
    }

    private List<Sentence> analyse(Pipeline p, String text) {
        List<Sentence> out = new ArrayList<>();
        for (Span s : joinAbbreviations(text, p.sentences().sentPosDetect(text))) {
            String sentence = text.substring(s.getStart(), s.getEnd());
            Span[] spans = finalPeriodApart(sentence, tokenize(p.tokenizer(), sentence));
            String[] words = new String[spans.length];
            for (int i = 0; i < spans.length; i++) {
                words[i] = sentence.substring(spans[i].getStart(), spans[i].getEnd());
            }
            String[] tags = correct(words, tag(p.tagger(), words));
            List<Token> tokens = new ArrayList<>(spans.length);
            for (int i = 0; i < spans.length; i++) {
                tokens.add(new Token(
                        words[i], s.getStart() + spans[i].getStart(), s.getStart() + spans[i].getEnd(), tags[i]));
            }
            out.add(new Sentence(s.getStart(), s.getEnd(), List.copyOf(tokens)));
        }
        return out;
    }

    /**
     * The sentence's last token with its period apart, when the tokenizer left them together though the word is no
     * abbreviation: it keeps the period on a word it does not know, more so one with capitals inside ("RocksDB.",
     * "KRaft."), which would then be a name ending in a period. A known abbreviation ("Inc.", "St."), an initial
     * ("M.") and a word with periods inside ("U.S.") keep theirs.
     */
    static Span[] finalPeriodApart(String sentence, Span[] spans) {
        if (spans.length == 0) {
            return spans;
        }
        Span last = spans[spans.length - 1];
        String word = sentence.substring(last.getStart(), last.getEnd());
        if (word.length() < 3 || !word.endsWith(".")) {
            return spans;
        }
        String bare = word.substring(0, word.length() - 1);
        if (bare.indexOf('.') >= 0
                || !Character.isLetterOrDigit(bare.charAt(bare.length() - 1))
                || ABBREVIATIONS.contains(bare.toLowerCase(Locale.ROOT))) {
            return spans;
        }
        Span[] out = Arrays.copyOf(spans, spans.length + 1);
        out[spans.length - 1] = new Span(last.getStart(), last.getEnd() - 1);
        out[spans.length] = new Span(last.getEnd() - 1, last.getEnd());
        return out;
    }

    /** The word and period that end a detected sentence. */
    private static final Pattern LAST_WORD = Pattern.compile("([\\p{L}.]+)\\.$");

    /** Abbreviations after which the sentence model splits though the sentence goes on ("Op. 70", "St. Louis"). */
    private static final Set<String> ABBREVIATIONS = Set.of(
            "op", "no", "nos", "vol", "vols", "st", "mt", "ft", "dr", "mr", "mrs", "ms", "jr", "sr", "vs", "co", "inc",
            "ltd", "pp", "ca", "fig", "ch", "sec", "gen", "col", "lt", "capt", "sgt", "rev", "prof", "e.g", "i.e",
            "approx", "est");

    /**
     * Abbreviations that stand before a name ("St. Louis", "Mt. Everest", "Dr. Watson"): after them a capital starts
     * the name, not a new sentence.
     */
    private static final Set<String> BEFORE_NAMES =
            Set.of("St", "Mt", "Ft", "Dr", "Mr", "Mrs", "Ms", "Prof", "Gen", "Col", "Lt", "Capt", "Sgt", "Rev");

    /**
     * A middle initial ending a detected sentence: a capitalized given name, then one capital letter and its period
     * ("Iain M.", "George R. R."). The name goes on after it ("Iain M. Banks"). Not I, V or X, which end
     * regnal names ("World War I.").
     */
    private static final Pattern MIDDLE_INITIAL =
            Pattern.compile("(?:^|\\s)(?:\\p{Lu}\\p{Ll}+|\\p{Lu}\\.)\\s[\\p{Lu}&&[^IVX]]\\.$");

    /** Words that open sentences, never names: after "Baker St." they start the next sentence. */
    private static final Set<String> SENTENCE_OPENERS = Set.of(
            "the", "a", "an", "he", "she", "it", "they", "we", "i", "you", "this", "that", "these", "those", "there",
            "his", "her", "its", "their", "in", "on", "at", "after", "before", "but", "and", "or", "so", "then", "when",
            "while", "as", "if", "however", "also", "for", "from", "with", "by", "to", "one", "some", "many", "all");

    /**
     * Joins what the sentence model split after an abbreviation: a sentence does not start in lower case or with
     * a number right after "Op.", "No.", "St." and the like ("Op. 70, is the score"), nor with the name that follows
     * a title or place prefix ("St. Louis", "Dr. Watson").
     */
    static List<Span> joinAbbreviations(String text, Span[] detected) {
        List<Span> out = new ArrayList<>(detected.length);
        for (Span s : detected) {
            if (!out.isEmpty() && s.getStart() < text.length()) {
                Span previous = out.get(out.size() - 1);
                int first = text.codePointAt(s.getStart());
                String abbreviation = lastAbbreviation(
                        text.substring(Math.max(previous.getStart(), previous.getEnd() - 12), previous.getEnd()));
                boolean initial = MIDDLE_INITIAL
                        .matcher(text.substring(
                                Math.max(previous.getStart(), previous.getEnd() - 40), previous.getEnd()))
                        .find();
                if (initial
                        && Character.isUpperCase(first)
                        && !SENTENCE_OPENERS.contains(firstWord(text, s.getStart()))) {
                    out.set(out.size() - 1, new Span(previous.getStart(), s.getEnd()));
                    continue;
                }
                if (abbreviation != null
                        && (Character.isLowerCase(first)
                                || Character.isDigit(first)
                                || (Character.isUpperCase(first)
                                        && BEFORE_NAMES.contains(abbreviation)
                                        && !SENTENCE_OPENERS.contains(firstWord(text, s.getStart()))))) {
                    out.set(out.size() - 1, new Span(previous.getStart(), s.getEnd()));
                    continue;
                }
            }
            out.add(s);
        }
        return out;
    }

    /** The known abbreviation (as written, without its period) a sentence ends with, or null. */
    private static String lastAbbreviation(String end) {
        Matcher m = LAST_WORD.matcher(end);
        if (!m.find()) {
            return null;
        }
        String word = m.group(1);
        return ABBREVIATIONS.contains(word.toLowerCase(Locale.ROOT)) ? word : null;
    }

    /** The first word (letters) from {@code at}, lower-cased. */
    private static String firstWord(String text, int at) {
        int end = at;
        while (end < text.length() && Character.isLetter(text.charAt(end))) {
            end++;
        }
        return text.substring(at, end).toLowerCase(Locale.ROOT);
    }

    private static final Set<String> PRONOUNS = Set.of(
            "he", "she", "it", "they", "him", "her", "his", "hers", "its", "their", "theirs", "them", "we", "us", "our",
            "i", "me", "my", "you", "your");
    private static final Set<String> CLOSED_TAGS = Set.of("ADP", "VERB", "AUX", "DET", "CCONJ", "SCONJ", "PART", "ADV");

    /**
     * Fixes the tagger's commonest slips on encyclopedic text: pronouns tagged as auxiliaries, and capitalized words
     * inside a sentence (which are names) tagged as prepositions or verbs ("Alan Turing/VERB", "Hut/ADP 8").
     */
    static String[] correct(String[] words, String[] tags) {
        for (int i = 0; i < words.length; i++) {
            String lower = words[i].toLowerCase(Locale.ROOT);
            if (PRONOUNS.contains(lower) && !tags[i].equals("PRON")) {
                tags[i] = lower.equals("her")
                                || lower.equals("his")
                                || lower.equals("its")
                                || lower.equals("their")
                                || lower.equals("my")
                                || lower.equals("our")
                                || lower.equals("your")
                        ? tags[i].equals("DET") ? "DET" : "PRON"
                        : "PRON";
            } else if (i > 0
                    && !words[i].isEmpty()
                    && Character.isUpperCase(words[i].codePointAt(0))
                    && CLOSED_TAGS.contains(tags[i])
                    && !".\"“(:;".contains(words[i - 1])) {
                tags[i] = "PROPN";
            }
        }
        return tags;
    }

    @FunctionalInterface
    private interface ModelReader<M> {
        M read(InputStream in) throws IOException;
    }

    private static <M> M load(String resource, ModelReader<M> reader) {
        try (InputStream in = EnglishNlp.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("OpenNLP model " + resource + " is not on the classpath");
            }
            return reader.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load OpenNLP model " + resource, e);
        }
    }
}
