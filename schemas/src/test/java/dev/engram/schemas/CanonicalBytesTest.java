package dev.engram.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CanonicalBytesTest {

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            out.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return out;
    }

    /**
     * The same document event gives the same bytes whatever order its metadata's keys were sent in, at every depth, and
     * in any JVM: the expected text is fixed here, where {@code Map.copyOf} iterates in an order drawn per JVM.
     */
    @Test
    void theSameContentGivesTheSameBytesWhateverTheOrderOfItsMaps() {
        Map<String, Object> sent =
                ordered("zeta", 1, "alpha", ordered("y", List.of(ordered("b", 2, "a", 1)), "x", true), "mid", "m");
        Map<String, Object> reordered =
                ordered("mid", "m", "alpha", ordered("x", true, "y", List.of(ordered("a", 1, "b", 2))), "zeta", 1);
        DocumentEvent one = new DocumentEvent("ns", "d", DocumentEvent.Op.UPSERT, "T", "text", null, sent, null);
        DocumentEvent two = new DocumentEvent("ns", "d", DocumentEvent.Op.UPSERT, "T", "text", null, reordered, null);

        assertThat(new String(Json.canonicalBytes(one), UTF_8))
                .isEqualTo(new String(Json.canonicalBytes(two), UTF_8))
                .isEqualTo("{\"namespace\":\"ns\",\"id\":\"d\",\"op\":\"upsert\",\"title\":\"T\",\"text\":\"text\","
                        + "\"metadata\":{\"alpha\":{\"x\":true,\"y\":[{\"a\":1,\"b\":2}]},\"mid\":\"m\",\"zeta\":1}}");
        // a list keeps its order: it is content
        DocumentEvent listed = new DocumentEvent(
                "ns", "d", DocumentEvent.Op.UPSERT, "T", "text", null, Map.of("l", List.of(2, 1)), null);
        assertThat(new String(Json.canonicalBytes(listed), UTF_8)).contains("\"l\":[2,1]");
    }
}
