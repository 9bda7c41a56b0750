package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Schemas;
import dev.engram.schemas.Span;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What must hold for any passage: every span points at the name or an alias, facts relate entities of the
 * passage, the result matches its schema. Run over the real encyclopedic passages of the evaluation set and a few
 * hostile texts.
 */
class RuleExtractorInvariantsTest {

    private static final RuleExtractor EXTRACTOR = new RuleExtractor(new EnglishNlp(), 3);

    static Stream<String[]> passages() throws IOException {
        List<String[]> out = new ArrayList<>();
        for (String line :
                Files.readAllLines(Path.of("..", "bench", "data", "extraction-labels.jsonl"), StandardCharsets.UTF_8)) {
            JsonNode n = Json.mapper().readTree(line);
            out.add(new String[] {n.path("title").asText(), n.path("text").asText()});
        }
        out.add(new String[] {"", "\"It\" is a 2017 film. \"He\" said \"She\" was \"It\"."});
        out.add(new String[] {"X", "((( ))) --- ,,, ... 1999 1999 1999"});
        out.add(new String[] {"", "ÉCOLE NORMALE SUPÉRIEURE (ENS) 🙂 and the Ünïcödé Cöllege of Zürich."});
        out.add(new String[] {"A", "A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A A."});
        out.add(new String[] {"", "He. She. It. They. His her its."});
        out.add(new String[] {"", "Senator. Queensland Senator. A/ B/ / // X's's Y's Z/. AC/DC's Senator Ann Bo/ rode."
        });
        out.add(new String[] {"T/", "Written by A, B and C, D, in E, F/ G's. Attorney General's Office of Governor X Y."
        });
        out.add(new String[] {
            "", "\"\" \" \"\"\" \"A\"( \"  B  \"\" \"" + "Long ".repeat(40) + "\" and \"unclosed Title. “Curly” Jr.'s"
        });
        out.add(new String[] {
            "", "By A B, 3rd Duke of. By A B, 3rd Duke. C D, 1st Earl of E, F. X Y, Jr.'s. G H. I. J. K."
        });
        return out.stream();
    }

    @ParameterizedTest
    @MethodSource("passages")
    void spansFactsAndSchemaHoldForEveryPassage(String title, String text) {
        Extraction x = EXTRACTOR.extract(new PassageEvent.Upsert(
                "ns", "d", 1, "0", 0, "h", title, List.of(), text, 0, text.length(), null, null));

        Set<String> names = new HashSet<>();
        for (Extraction.Entity e : x.entities()) {
            names.add(e.name());
            for (Span s : e.spans()) {
                assertThat(s.end()).isLessThanOrEqualTo(text.length());
                assertThat(text.substring(s.start(), s.end()))
                        .isIn(Stream.concat(Stream.of(e.name()), e.aliases().stream())
                                .toList());
            }
        }
        for (Extraction.Fact f : x.facts()) {
            assertThat(names).contains(f.head(), f.tail());
            assertThat(f.head()).isNotEqualTo(f.tail());
            assertThat(f.evidence().end()).isLessThanOrEqualTo(text.length());
        }
        for (Extraction.Relation r : x.relations()) {
            assertThat(names).containsAll(r.entities());
        }
        assertThat(x.questions()).hasSizeLessThanOrEqualTo(3).allSatisfy(q -> assertThat(q)
                .endsWith("?"));
        assertThat(Schemas.EXTRACTION.validate(Json.mapper().valueToTree(x))).isEmpty();
    }
}
