package dev.engram.schemas;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/** Hostile variants of a valid record: each one changed at a single place, for tests that judge every variant. */
final class Mutants {

    private Mutants() {}

    /** What replaces each value of a record in turn. */
    static final List<String> VALUES = List.of(
            "null",
            "true",
            "false",
            "0",
            "-1",
            "1",
            "7",
            "1.0",
            "1.5",
            "-0.0",
            "1e3",
            "0.9999999999999999",
            "1.0000000000000002",
            "-1e-300",
            "1e400",
            "9007199254740993",
            "9223372036854775808",
            "18446744073709551615",
            "1180591620717411303424",
            "-1180591620717411303424",
            "\"\"",
            "\"x\"",
            "\"\\ud83d\\ude00\"",
            "\"document\"",
            "\"passage\"",
            "\"entity\"",
            "\"mention\"",
            "\"fact\"",
            "\"question\"",
            "\"theme\"",
            "\"VERIFIED\"",
            "\"PERSON\"",
            "\"upsert\"",
            "\"QDRANT\"",
            "\"COMPENSATED\"",
            "\"2026-01-02T03:04:05Z\"",
            "\"2026-01-02T03:04:05.123456789Z\"",
            "\"2026-01-02T03:04:05.1234567891Z\"",
            "\"2026-01-02t03:04:05z\"",
            "\"2026-01-02T03:04:05.Z\"",
            "\"2026-01-02T03:04:05.1Z\"",
            "\"2026-01-02T03:04:05,1Z\"",
            "\"2026-1-02T03:04:05Z\"",
            "\"2026-01-02T03:04:5Z\"",
            "\"20260102T030405Z\"",
            "\"2026-01-02T03:04:05\u0661Z\"",
            "\"-2026-01-02T03:04:05Z\"",
            "\"2026-01-02 03:04:05Z\"",
            "\"2026-01-02T03:04Z\"",
            "\"2026-01-02T03:04:05\"",
            "\"2026-01-02T03:04:05+23:59\"",
            "\"2026-01-02T03:04:05-00:00\"",
            "\"2026-01-02T03:04:05+24:00\"",
            "\"2026-01-02T24:00:00Z\"",
            "\"2026-12-31T23:59:60Z\"",
            "\"2026-02-29T00:00:00Z\"",
            "\"2024-02-29T00:00:00Z\"",
            "\"2026-04-31T00:00:00Z\"",
            "\"2026-13-01T00:00:00Z\"",
            "\"0000-01-01T00:00:00Z\"",
            "\"0000-02-29T00:00:00Z\"",
            "\"1900-02-29T00:00:00Z\"",
            "\"2000-02-29T00:00:00Z\"",
            "\"\\ud800\"",
            "\"9999-12-31T23:59:59Z\"",
            "{}",
            "[]",
            "[\"x\"]",
            "[1]",
            "[null]",
            "{\"start\":0,\"end\":1}",
            "{\"start\":-1,\"end\":1}",
            "[{\"start\":0,\"end\":1}]",
            "[{\"start\":0}]");

    /** Every record changed at one place: each value removed, replaced by each of {@link #VALUES}, or one field added. */
    static List<JsonNode> of(JsonNode record) {
        List<JsonNode> out = new ArrayList<>();
        visit(record, JsonPointer.empty(), Mutants::parse, out);
        return out;
    }

    /**
     * The same variants as JSON text, each value of {@link #VALUES} written as it reads (a number beyond a double's
     * range stays that number, where a parsed tree would hold an infinity).
     */
    static List<String> texts(JsonNode record) {
        List<JsonNode> out = new ArrayList<>();
        visit(record, JsonPointer.empty(), v -> JsonNodeFactory.instance.rawValueNode(new RawValue(v)), out);
        List<String> texts = new ArrayList<>(out.size());
        for (JsonNode n : out) {
            try {
                texts.add(Json.mapper().writeValueAsString(n));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        return texts;
    }

    private static void visit(JsonNode root, JsonPointer at, Function<String, JsonNode> value, List<JsonNode> out) {
        JsonNode node = root.at(at);
        if (node.isObject()) {
            out.add(changed(root, at, o -> ((ObjectNode) o).put("unknown", 1)));
            List<String> names = new ArrayList<>();
            node.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                out.add(changed(root, at, o -> ((ObjectNode) o).remove(name)));
                for (String v : VALUES) {
                    out.add(changed(root, at, o -> ((ObjectNode) o).set(name, value.apply(v))));
                }
                visit(root, at.appendProperty(name), value, out);
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                int index = i;
                for (String v : VALUES) {
                    out.add(changed(root, at, a -> ((ArrayNode) a).set(index, value.apply(v))));
                }
                visit(root, at.appendIndex(i), value, out);
            }
        }
    }

    /** A copy of {@code root} with {@code change} made to its node {@code at}. */
    private static JsonNode changed(JsonNode root, JsonPointer at, Consumer<JsonNode> change) {
        JsonNode copy = root.deepCopy();
        change.accept(copy.at(at));
        return copy;
    }

    static JsonNode parse(String json) {
        try {
            return Json.mapper().readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException(json, e);
        }
    }
}
