package dev.engram.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.MemoryCommand;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RequestsTest {

    private static Requests.Retrieve retrieve(String json) {
        return Requests.read(json.getBytes(StandardCharsets.UTF_8), Requests.Retrieve.class, "{}");
    }

    private static Requests.Command command(String json) {
        return Requests.read(json.getBytes(StandardCharsets.UTF_8), Requests.Command.class, "{}");
    }

    @Test
    void aBodyThatIsNotUtf8IsRefusedEvenWhereAJsonParserWouldReadIt() {
        for (byte[] bad : new byte[][] {
            {'{', '"', 'q', 'u', 'e', 'r', 'y', '"', ':', '"', (byte) 0xC0, (byte) 0xAF, '"', '}'},
            {'{', '"', 'q', 'u', 'e', 'r', 'y', '"', ':', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', '}'},
            {'{', '"', 'q', 'u', 'e', 'r', 'y', '"', ':', '"', (byte) 0xFF, '"', '}'}
        }) {
            assertThatThrownBy(() -> Requests.read(bad, Requests.Retrieve.class, "{}"))
                    .isInstanceOfSatisfying(
                            ApiException.class, e -> assertThat(e.status()).isEqualTo(400))
                    .hasMessageContaining("UTF-8");
        }
    }

    @Test
    void aRetrieveRequestTakesItsDefaults() {
        Requests.Retrieve r = retrieve("{\"query\": \"who?\"}");

        assertThat(r.query()).isEqualTo("who?");
        assertThat(r.mode()).isEqualTo(Requests.DEFAULT_MODE);
        assertThat(r.topK()).isEqualTo(5);
        assertThat(r.params()).isEmpty();
    }

    @Test
    void aRetrieveRequestBindsEveryField() {
        Requests.Retrieve r =
                retrieve("{\"query\": \"q\", \"mode\": \"dense\", \"top_k\": 7, \"params\": {\"epsilon\": 0.9}}");

        assertThat(r.mode()).isEqualTo("dense");
        assertThat(r.topK()).isEqualTo(7);
        assertThat(r.params()).containsEntry("epsilon", 0.9);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"query\": \"x\", \"top_k\": \"5\"}",
                "{\"query\": \"x\", \"top_k\": 5.5}",
                "{\"query\": \"x\", \"top_k\": 0}",
                "{\"query\": \"x\", \"top_k\": 101}",
                "{\"query\": \"x\", \"top_k\": true}",
                "{\"query\": 42}",
                "{\"query\": \"\"}",
                "{\"query\": \"   \"}",
                "{\"query\": null}",
                "{}",
                "{\"query\": \"x\", \"mode\": 3}",
                "{\"query\": \"x\", \"params\": [1]}",
                "{\"query\": \"x\", \"params\": {\"epsilon\": \"0.9\"}}",
                "{\"query\": \"x\", \"params\": {\"epsilon\": null}}",
                "[1]",
                "\"query\"",
                "{not json",
                "",
                "{\"query\": \"x\"} trailing",
                "{\"query\": \"x\", \"topK\": 50}",
                "{\"query\": \"x\", \"query\": \"y\"}"
            })
    void rejectsWhatIsNotARetrieveRequestWithA400(String json) {
        assertThatThrownBy(() -> retrieve(json)).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.getMessage()).isNotBlank();
        });
    }

    @Test
    void aTooLongQueryIsRejectedNamingTheLimit() {
        assertThatThrownBy(() -> retrieve("{\"query\": \"" + "x".repeat(Requests.MAX_QUERY_CHARS + 1) + "\"}"))
                .hasMessageContaining(Integer.toString(Requests.MAX_QUERY_CHARS));
    }

    /** The limit counts characters as a person does (code points): an emoji is one, not two UTF-16 units. */
    @Test
    void theLimitCountsCharactersAndAQueryNeedsAVisibleOne() {
        assertThat(retrieve("{\"query\": \"" + "😀".repeat(Requests.MAX_QUERY_CHARS) + "\"}")
                        .query())
                .hasSize(2 * Requests.MAX_QUERY_CHARS);
        assertThatThrownBy(() -> retrieve("{\"query\": \"" + "😀".repeat(Requests.MAX_QUERY_CHARS + 1) + "\"}"))
                .hasMessageContaining("longer than");
        for (String invisible : List.of("\\u200b\\u200b", "\\u0001\\u0002", " \\t ", "\\u00a0")) {
            assertThatThrownBy(() -> retrieve("{\"query\": \"" + invisible + "\"}"))
                    .as(invisible)
                    .hasMessageContaining("visible character");
        }
    }

    /** A body is UTF-8: UTF-16 or UTF-32 (which the parser would detect) and overlong forms are refused. */
    @Test
    void aBodyInAnotherEncodingIsRefused() {
        String json = "{\"query\": \"x\"}";
        for (Charset other : List.of(StandardCharsets.UTF_16LE, StandardCharsets.UTF_16BE)) {
            assertThatThrownBy(() -> Requests.read(json.getBytes(other), Requests.Retrieve.class, "{}"))
                    .as(other.name())
                    .isInstanceOf(ApiException.class);
        }
        byte[] overlong = {'{', '"', 'q', 'u', 'e', 'r', 'y', '"', ':', '"', (byte) 0xc0, (byte) 0xaf, '"', '}'};
        assertThatThrownBy(() -> Requests.read(overlong, Requests.Retrieve.class, "{}"))
                .hasMessageContaining("not valid UTF-8");
    }

    /** A number too large for a double is refused before anything writes it (it would be written as "Infinity"). */
    @Test
    void aNumberOutOfRangeInABodyIsRefused() {
        assertThatThrownBy(() -> Requests.object(
                        "{\"text\": \"x\", \"metadata\": {\"a\": 1e400}}".getBytes(StandardCharsets.UTF_8), "{}"))
                .hasMessage("body: /metadata/a: a number out of range");
        assertThat(Requests.object("{\"a\": 1e300}".getBytes(StandardCharsets.UTF_8), "{}")
                        .path("a")
                        .asDouble())
                .isEqualTo(1e300);
    }

    @Test
    void anUnknownFieldIsNamedNotIgnored() {
        assertThatThrownBy(() -> retrieve("{\"query\": \"x\", \"topK\": 50}")).hasMessageContaining("'topK'");
    }

    @Test
    void theWrongTypeNamesTheField() {
        assertThatThrownBy(() -> retrieve("{\"query\": \"x\", \"top_k\": \"5\"}"))
                .hasMessageContaining("'top_k'");
    }

    @Test
    void aCommandBindsItsOperation() {
        String a = "0".repeat(32);
        String b = "f".repeat(32);
        Requests.Command c = command(
                "{\"op\": \"split\", \"entity_id\": \"" + a + "\", \"other_id\": \"" + b + "\", \"reason\": \"two\"}");

        assertThat(c.operation()).isEqualTo(MemoryCommand.Op.SPLIT);
        assertThat(c.reason()).isEqualTo("two");
        assertThat(command("{\"op\": \"split\", \"entity_id\": \"" + a + "\", \"other_id\": \"" + b
                                + "\", \"reason\": \"one\\ntwo 😀\"}")
                        .reason())
                .isEqualTo("one\ntwo 😀");
        assertThat(command("{\"op\": \"clear\", \"entity_id\": \"" + a + "\", \"other_id\": \"" + b + "\"}")
                        .reason())
                .isEmpty();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"op\": \"explode\", \"entity_id\": \"00000000000000000000000000000000\","
                        + " \"other_id\": \"ffffffffffffffffffffffffffffffff\"}",
                "{\"op\": \"split\", \"entity_id\": \"x\", \"other_id\": \"y\"}",
                "{\"op\": \"split\", \"entity_id\": \"00000000000000000000000000000000\"}",
                "{\"op\": \"split\", \"entity_id\": 1, \"other_id\": 2}",
                "{\"op\": \"split\", \"entity_id\": \"00000000000000000000000000000000\","
                        + " \"other_id\": \"ffffffffffffffffffffffffffffffff\", \"reason\": 5}",
                "{\"op\": \"split\", \"entity_id\": \"00000000000000000000000000000000\","
                        + " \"other_id\": \"ffffffffffffffffffffffffffffffff\", \"reason\": \"a\\u0000b\"}",
                "{\"op\": \"split\", \"entity_id\": \"00000000000000000000000000000000\","
                        + " \"other_id\": \"ffffffffffffffffffffffffffffffff\", \"reason\": \"\\ud800\"}"
            })
    void rejectsWhatIsNotACommandWithA400(String json) {
        assertThatThrownBy(() -> command(json)).isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status())
                .isEqualTo(400));
    }
}
