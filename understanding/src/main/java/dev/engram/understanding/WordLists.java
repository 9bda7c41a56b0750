package dev.engram.understanding;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Loads the word lists the rule extractor keys on from classpath resources.
 *
 * <p>A list is a UTF-8 text file with one entry per line. Each line is stripped of surrounding whitespace; blank lines
 * and lines whose first non-blank character is {@code #} are skipped. Entries are kept exactly as written otherwise:
 * case is not folded and inner spaces of multi-word entries are preserved. A missing resource, a duplicate entry or a
 * list with no entries fails fast with an {@link IllegalStateException} naming the resource, so a broken build shows
 * up when {@link RuleExtractor} is first loaded rather than as quietly different extractions.
 */
final class WordLists {

    /** The classpath folder holding the rule extractor's lists, one {@code <name>.txt} per list. */
    static final String RULES = "/dev/engram/understanding/rules/";

    private WordLists() {}

    /** The list {@code RULES + name + ".txt"}, e.g. {@code load("honorifics")}. */
    static Set<String> load(String name) {
        return read(RULES + name + ".txt");
    }

    /** The list at an absolute classpath resource path. */
    static Set<String> read(String resource) {
        try (InputStream in = WordLists.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("word list resource " + resource + " is missing from the classpath");
            }
            return parse(resource, new InputStreamReader(in, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read word list resource " + resource, e);
        }
    }

    /**
     * The entries of one list read from {@code reader}; {@code source} names it in error messages.
     *
     * @return an immutable set of the entries
     */
    static Set<String> parse(String source, Reader reader) throws IOException {
        Set<String> entries = new LinkedHashSet<>();
        BufferedReader lines = reader instanceof BufferedReader b ? b : new BufferedReader(reader);
        int number = 0;
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            number++;
            if (number == 1 && line.startsWith("\uFEFF")) {
                line = line.substring(1); // a byte-order mark is not part of the first entry
            }
            String entry = line.strip();
            if (entry.isEmpty() || entry.startsWith("#")) {
                continue;
            }
            if (!entries.add(entry)) {
                throw new IllegalStateException(
                        "word list " + source + " has a duplicate entry '" + entry + "' at line " + number);
            }
        }
        if (entries.isEmpty()) {
            throw new IllegalStateException("word list " + source + " has no entries");
        }
        return Set.copyOf(entries);
    }
}
