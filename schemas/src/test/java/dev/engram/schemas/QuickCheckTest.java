package dev.engram.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The quick check must never disagree with the full validator: every record Java writes, and thousands of mutants of
 * them (each value removed, replaced by values of every type and by tricky strings and numbers, objects given an
 * unknown field), are judged by both.
 */
class QuickCheckTest {

    @Test
    void theMirrorAndCompensationSchemasAreCoveredAndEveryRecordJavaWritesIsPassedWithoutTheFullValidator() {
        assertThat(Schemas.MIRROR.quick()).isTrue();
        assertThat(Schemas.COMPENSATION.quick()).isTrue();
        for (JsonNode r : mirrorRecords()) {
            assertThat(Schemas.MIRROR.quickly(r)).as(r.toString()).isEqualTo(QuickCheck.Verdict.VALID);
        }
        assertThat(Schemas.COMPENSATION.quickly(parsed(SchemaConformanceTest.compensation())))
                .isEqualTo(QuickCheck.Verdict.VALID);
    }

    @Test
    void neverDisagreesWithTheFullValidatorOnMutantsOfMirrorRecords() {
        Map<QuickCheck.Verdict, Integer> judged = judgeMutants(Schemas.MIRROR, mirrorRecords());
        // the mutants must exercise every answer, or the test proves nothing
        assertThat(judged.get(QuickCheck.Verdict.VALID)).as("passed").isGreaterThan(500);
        assertThat(judged.get(QuickCheck.Verdict.INVALID)).as("refused").isGreaterThan(500);
        assertThat(judged.get(QuickCheck.Verdict.UNSURE))
                .as("left to the full validator")
                .isGreaterThan(50);
    }

    @Test
    void neverDisagreesWithTheFullValidatorOnMutantsOfCompensations() {
        Map<QuickCheck.Verdict, Integer> judged =
                judgeMutants(Schemas.COMPENSATION, List.of(parsed(SchemaConformanceTest.compensation())));
        assertThat(judged.get(QuickCheck.Verdict.VALID)).isGreaterThan(20);
        assertThat(judged.get(QuickCheck.Verdict.INVALID)).isGreaterThan(20);
    }

    @Test
    void aMirrorRecordWithANumberWrittenAsADecimalIsLeftToTheFullValidatorWhichAcceptsIt() {
        ObjectNode r = (ObjectNode) mirrorRecords().get(0);
        r.put("version", 4.0);
        assertThat(Schemas.MIRROR.quickly(r)).isEqualTo(QuickCheck.Verdict.UNSURE);
        assertThat(Schemas.MIRROR.validate(r)).isEmpty();
        r.put("version", 4.5);
        assertThat(Schemas.MIRROR.quickly(r)).isEqualTo(QuickCheck.Verdict.UNSURE);
        assertThat(Schemas.MIRROR.validate(r)).isNotEmpty();
    }

    @Test
    void schemasBeyondTheSubsetAreNotCompiled() {
        for (String schema : List.of(
                "{\"type\":\"string\",\"pattern\":\"^a\"}",
                "{\"oneOf\":[{\"type\":\"string\"}]}",
                "{\"$ref\":\"other.schema.json\"}",
                "{\"$ref\":\"#/$defs/missing\"}",
                "{\"additionalProperties\":{\"type\":\"string\"}}",
                "{\"enum\":[1,2]}",
                "{\"minimum\":0.5}",
                "{\"format\":\"email\"}",
                "{\"properties\":{\"a\":{\"$id\":\"x\"}}}",
                "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"contentEncoding\":\"base64\"}",
                "{\"readOnly\":true}",
                "{\"maximum\":1152921504606846976}",
                "{\"$ref\":\"#/$defs/a%20b\",\"$defs\":{\"a b\":true}}",
                "{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}}}",
                "{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{\"allOf\":[{\"$ref\":\"#/$defs/b\"}]},"
                        + "\"b\":{\"$ref\":\"#/$defs/a\"}}}")) {
            assertThat(QuickCheck.compile(parse(schema))).as(schema).isEmpty();
        }
        JsonNode recursive = parse("{\"$ref\":\"#/$defs/list\",\"$defs\":{\"list\":{\"type\":\"array\","
                + "\"items\":{\"$ref\":\"#/$defs/list\"}}}}");
        QuickCheck.Check list = QuickCheck.compile(recursive).orElseThrow();
        assertThat(list.test(parse("[[],[[]]]"))).isEqualTo(QuickCheck.Verdict.VALID);
        assertThat(list.test(parse("[[],[1]]"))).isEqualTo(QuickCheck.Verdict.INVALID);
    }

    /** Small schemas at the edges of the subset, each instance judged by the quick check and the full validator. */
    @Test
    void neverDisagreesWithTheFullValidatorAtTheEdgesOfTheSubset() {
        List<String> numbers = List.of(
                "0",
                "-0.0",
                "4.0",
                "1000",
                "1000.0",
                "1000.5",
                "999.9999999999999",
                "1e19",
                "1e400",
                "-1e400",
                "9007199254740992",
                "9007199254740992.0",
                "9007199254740993",
                "9223372036854775807",
                "9223372036854775808",
                "18446744073709551615",
                "-18446744073709551615",
                "\"a\"",
                "null");
        Map<String, List<String>> cases = Map.of(
                "{\"type\":\"integer\",\"minimum\":0}",
                numbers,
                "{\"type\":\"number\",\"maximum\":9007199254740992}",
                numbers,
                "{\"if\":{\"type\":\"integer\",\"maximum\":1000},\"then\":false}",
                numbers,
                "{\"if\":{\"maximum\":1000},\"then\":false,\"else\":{\"type\":\"string\"}}",
                numbers,
                "{\"if\":{\"enum\":[\"a\"]},\"then\":false}",
                numbers,
                "{\"type\":\"string\",\"format\":\"date-time\"}",
                List.of(
                        "\"0000-02-29T00:00:00Z\"",
                        "\"1900-02-29T00:00:00Z\"",
                        "\"2000-02-29T00:00:00Z\"",
                        "\"2026-01-02T03:04:05.000000000Z\"",
                        "\"\\ud800\"",
                        "1"),
                "{\"type\":\"string\",\"minLength\":2,\"maxLength\":2}",
                List.of("\"ab\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\\ude00x\"", "\"\\ud800x\"", "\"a\"", "\"abc\""));
        JsonSchemaFactory factory = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
        SchemaValidatorsConfig config =
                SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build();
        List<String> disagreements = new ArrayList<>();
        cases.forEach((text, instances) -> {
            JsonNode schema = parse(text);
            QuickCheck.Check quick = QuickCheck.compile(schema).orElseThrow();
            JsonSchema full = factory.getSchema(schema, config);
            for (String i : instances) {
                JsonNode instance = parse(i);
                QuickCheck.Verdict verdict = quick.test(instance);
                boolean valid;
                try {
                    valid = full.validate(instance).isEmpty();
                } catch (NumberFormatException e) {
                    valid = false; // as Schemas reports it
                }
                if ((verdict == QuickCheck.Verdict.VALID && !valid)
                        || (verdict == QuickCheck.Verdict.INVALID && valid)) {
                    disagreements.add(text + " " + i + ": " + verdict + " but " + (valid ? "valid" : "invalid"));
                }
            }
        });
        assertThat(disagreements).isEmpty();
    }

    /**
     * Judges every mutant of {@code records} by both validators; returns how many the quick check passed, refused and
     * left to the full validator.
     */
    private static Map<QuickCheck.Verdict, Integer> judgeMutants(Schemas schema, List<JsonNode> records) {
        Map<QuickCheck.Verdict, Integer> judged = new EnumMap<>(QuickCheck.Verdict.class);
        List<String> disagreements = new ArrayList<>();
        for (JsonNode record : records) {
            for (JsonNode mutant : Mutants.of(record)) {
                QuickCheck.Verdict quick = schema.quickly(mutant);
                boolean valid = schema.validateFully(mutant).isEmpty();
                judged.merge(quick, 1, Integer::sum);
                if ((quick == QuickCheck.Verdict.VALID && !valid) || (quick == QuickCheck.Verdict.INVALID && valid)) {
                    disagreements.add(quick + " but the full validator finds it " + (valid ? "valid" : "invalid") + ": "
                            + mutant);
                }
            }
        }
        assertThat(disagreements).isEmpty();
        return judged;
    }

    /** The mirror records Java writes, read back as a consumer reads them. */
    private static List<JsonNode> mirrorRecords() {
        return SchemaConformanceTest.mirrorRecordsOfEveryKind().stream()
                .map(QuickCheckTest::parsed)
                .toList();
    }

    private static JsonNode parsed(Object value) {
        return parse(new String(Json.toBytes(value), UTF_8));
    }

    private static JsonNode parse(String json) {
        return Mutants.parse(json);
    }
}
