package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every regular expression the shipped code applies to text runs on RE2/J, whose time is linear in the text, or is
 * written as a plain scan: Java's backtracking engine takes quadratic or worse time on some inputs (a heading line of
 * a million {@code " #"}, a query of a thousand {@code " or "}), and an untrusted document or request must not hold a
 * partition or a core for minutes. The few files left on {@code java.util.regex} read only what the operator or the
 * project wrote, or a string they bound first; each says why below. A new use anywhere else fails this test.
 */
class LinearPatternsTest {

    /** Files that may use the backtracking engine, and why that is safe. */
    private static final Map<String, String> TRUSTED = Map.of(
            "processors/src/main/java/dev/engram/processors/Verifier.java",
                    "entity names, refused above 120 characters before any pattern runs",
            "understanding/src/main/java/dev/engram/understanding/EnglishNlp.java",
                    "at most the last 40 characters of a detected sentence",
            "service/src/main/java/dev/engram/service/app/EngramConfigReader.java", "the operator's settings",
            "service/src/main/java/dev/engram/service/app/ConfigVariables.java", "the operator's settings",
            "service/src/main/java/dev/engram/service/http/ApiKeys.java", "the operator's key list",
            "service/src/main/java/dev/engram/service/cli/EvalCommand.java", "the operator's command line",
            "service/src/main/java/dev/engram/service/cli/ClientCommands.java",
                    "the operator's command line and the metrics text of an Engram instance");

    private static final Pattern BACKTRACKING = Pattern.compile(
            "java\\.util\\.regex" // the engine itself
                    + "|\\.matches\\(\\s*\"" // String.matches(regex)
                    + "|\\.(?:replaceAll|replaceFirst)\\(\\s*\"(?:[^\"\\\\]|\\\\.)*\"\\s*," // String's, not a Matcher's
                    + "|\\.split\\(\\s*\"(?!(?:[^.$|()\\[{^?*+\\\\\"]|\\\\[ntrf]|\\\\\\\\[^0-9A-Za-z])\")" // a split
            // that is no
            // fast path
            );

    @Test
    void noBacktrackingPatternReadsUntrustedText() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<String> found = new ArrayList<>();
        int files = 0;
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(m -> Files.isDirectory(m.resolve("src/main/java")))
                    .filter(m -> !m.getFileName().toString().equals("bench")) // reads the project's own data sets
                    .toList()) {
                try (Stream<Path> sources = Files.walk(module.resolve("src/main/java"))) {
                    for (Path source :
                            sources.filter(p -> p.toString().endsWith(".java")).toList()) {
                        files++;
                        String relative = root.relativize(source).toString().replace('\\', '/');
                        if (TRUSTED.containsKey(relative)) {
                            continue;
                        }
                        List<String> lines = read(source);
                        for (int i = 0; i < lines.size(); i++) {
                            Matcher m = BACKTRACKING.matcher(lines.get(i));
                            if (m.find()) {
                                found.add(relative + ":" + (i + 1) + ": "
                                        + lines.get(i).strip());
                            }
                        }
                    }
                }
            }
        }
        assertThat(files).as("the sources were found").isGreaterThan(100);
        assertThat(found)
                .as("patterns on java.util.regex outside the files that read only trusted or bounded text")
                .isEmpty();
    }

    @Test
    void theScanFindsWhatItLooksFor() {
        assertThat(Stream.of(
                        "import java.util.regex.Pattern;",
                        "s.replaceAll(\"\\\\s+\", \" \")",
                        "title.replaceFirst(\"x$\", \"\")",
                        "t.matches(\"\\\\p{Lu}\")",
                        "q.split(\"\\\\s+\")",
                        "q.split(\"ab\")",
                        "q.split(\".\")"))
                .allMatch(line -> BACKTRACKING.matcher(line).find());
        assertThat(Stream.of(
                        "SPACES.matcher(s).replaceAll(\" \")",
                        "m.matches()",
                        "line.split(\" \", 3)",
                        "raw.split(\"&\")",
                        "text.split(\"\\n\", -1)",
                        "x.split(\"\\\\|\")",
                        "import com.google.re2j.Pattern;"))
                .noneMatch(line -> BACKTRACKING.matcher(line).find());
    }

    private static List<String> read(Path source) {
        try {
            return Files.readAllLines(source);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
