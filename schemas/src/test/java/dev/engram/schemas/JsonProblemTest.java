package dev.engram.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a person is told about refused JSON: the problem and where, never the parser's classes and settings. */
class JsonProblemTest {

    private static final ObjectReader STRICT = Json.mapper()
            .reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private static String problem(String json) {
        Throwable failure = catchThrowable(() -> STRICT.readTree(json));
        assertThat(failure).as(json).isNotNull();
        return Json.problem(failure);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"top_k\": NaN}|Non-standard token 'NaN' (line 1, column 14)",
                "{\"a\": 1} {}|more data after the JSON value",
                "{\"a\": 1, \"a\": 2}|Duplicate field 'a' (line 1, column 13)",
                "{\"a\": |Unexpected end-of-input within/between Object entries (line 1, column 6)",
                "{\"a\": tru}|Unrecognized token 'tru'",
                "{\"a\": 1 /*c*/}|Unexpected character ('/' (code 47)): maybe a (non-standard) comment? (line 1"
            })
    void namesTheProblemAndWhereWithoutTheParsersInternals(String json, String expected) {
        String problem = problem(json);
        assertThat(problem).startsWith(expected);
        assertThat(problem).doesNotContain("`", "com.fasterxml", "Source", "Feature", "bound as", "enable", "parser");
    }

    /**
     * Jackson quotes the input in some messages (a duplicate field's whole name, up to 50,000 characters): the message
     * is tidied in linear time however the quoted part is built (white space that a backtracking cleanup would scan
     * again from every position).
     */
    @Test
    void aMessageQuotingHugeInputIsTidiedInLinearTime() {
        String name = " ".repeat(49_000) + "\\n" + " ".repeat(990);
        String json = "{\"" + name + "\":1,\"" + name + "\":2}";
        String problem = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> problem(json));
        assertThat(problem).startsWith("Duplicate field '").doesNotContain("\n");
    }

    @Test
    void limitsAreSaidInWords() {
        assertThat(problem("[".repeat(1001) + "]".repeat(1001)))
                .startsWith("nested deeper than the 1000 levels allowed");
        assertThat(problem("[" + "1".repeat(1001) + "]")).startsWith("a number longer than the 1000 digits allowed");
        assertThat(problem("{\"" + "n".repeat(60_000) + "\": 1}"))
                .startsWith("Name length (60000) exceeds the maximum allowed (50000)")
                .doesNotContain("get");
    }

    @Test
    void aTypeIsNamedByItsSimpleName() {
        Throwable failure = catchThrowable(() -> Json.mapper().readValue("\"x\"", Extraction.class));
        assertThat(Json.problem(failure))
                .startsWith("Cannot construct instance of Extraction")
                .doesNotContain("`", "dev.engram");
    }

    @Test
    void aFailureWithoutAMessageStillSaysSomething() {
        assertThat(Json.problem(new RuntimeException())).isEqualTo("not valid JSON");
    }

    /**
     * A value that would not be kept as sent is named by its JSON pointer (names escaped as RFC 6901 says), and the
     * walk that finds it makes no path for what it passes by: a name of 50,000 characters over a million array
     * elements, and twenty such names nested, take time linear in the value.
     */
    @Test
    void whatWouldNotBeKeptIsNamedByItsPointerInTimeLinearInTheValue() throws Exception {
        assertThat(Json.notKeptAsRead(Json.mapper().readTree("{\"a/b~c\": [0, {\"x\": 1e400}]}")))
                .isEqualTo("/a~1b~0c/1/x: a number out of range");
        assertThat(Json.notKeptAsRead(Json.mapper().readTree("1e400"))).isEqualTo("/: a number out of range");
        assertThat(Json.notKeptAsRead(Json.mapper().readTree("{\"a\": [\"ok\"]}")))
                .isNull();

        String name = "k".repeat(50_000);
        String wide = "{\"" + name + "\": [" + "0,".repeat(1_000_000) + "\"\\ud800\"]}";
        String deep = ("{\"" + name + "\": ").repeat(20) + "[" + "0,".repeat(200_000) + "1]" + "}".repeat(20);
        var wideTree = Json.mapper().readTree(wide);
        var deepTree = Json.mapper().readTree(deep);
        String found = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> Json.notKeptAsRead(wideTree));
        assertThat(found).isEqualTo("/" + "k".repeat(99) + "…/1000000: an unpaired surrogate, which is not text");
        // the name refused is shown with its surrogate escaped, so that the message itself can be written
        assertThat(Json.notKeptAsRead(Json.mapper().readTree("{\"a\\ud800b\": 1}")))
                .isEqualTo("/a\\uD800b: an unpaired surrogate, which is not text");
        assertThat(assertTimeoutPreemptively(Duration.ofSeconds(20), () -> Json.notKeptAsRead(deepTree)))
                .isNull();
    }
}
