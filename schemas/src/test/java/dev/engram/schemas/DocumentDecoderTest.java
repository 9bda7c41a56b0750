package dev.engram.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

class DocumentDecoderTest {

    private final DocumentDecoder decoder = new DocumentDecoder(4096);

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private String rejection(String key, byte[] value) {
        DocumentDecoder.Result result = decoder.decode(key == null ? null : utf8(key), value);
        assertThat(result).isInstanceOf(DocumentDecoder.Rejected.class);
        return ((DocumentDecoder.Rejected) result).reason();
    }

    @Test
    void acceptsAnUpsertWithEveryField() {
        String json = """
                {"namespace":"wiki","id":"doc-1","op":"upsert","title":"T","text":"Some text.",
                 "source":"https://example.org/a","metadata":{"lang":"en"},"event_time":"2024-05-01T10:00:00Z"}""";

        DocumentDecoder.Result result = decoder.decode(utf8("doc-1"), utf8(json));

        assertThat(result).isInstanceOf(DocumentDecoder.Accepted.class);
        DocumentEvent e = ((DocumentDecoder.Accepted) result).event();
        assertThat(e.namespace()).isEqualTo("wiki");
        assertThat(e.op()).isEqualTo(DocumentEvent.Op.UPSERT);
        assertThat(e.metadata()).containsEntry("lang", "en");
        assertThat(e.eventTime()).isEqualTo(Instant.parse("2024-05-01T10:00:00Z"));
    }

    /** Metadata nests at most 32 levels: every reply that shows the document nests it deeper, within JSON's limits. */
    @Test
    void refusesMetadataNestedDeeperThanItsLimitAndKeepsWhatIsWithin() {
        DocumentDecoder big = new DocumentDecoder(1 << 20);
        IntFunction<String> nested = levels -> // the metadata object itself is level 1
                "{\"a\":".repeat(levels - 1) + "[1]" + "}".repeat(levels - 1);
        String at = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"x\",\"metadata\":%s}";
        assertThat(DocumentDecoder.depth(Json.mapper().valueToTree(Map.of()))).isEqualTo(1);
        assertThat(big.decode(utf8("d"), utf8(at.formatted(nested.apply(32)))))
                .isInstanceOf(DocumentDecoder.Accepted.class); // 31 objects, the metadata's among them, and an array
        DocumentDecoder.Result deep = big.decode(utf8("d"), utf8(at.formatted(nested.apply(33))));
        assertThat(deep).isInstanceOfSatisfying(DocumentDecoder.Rejected.class, r -> {
            assertThat(r.cause()).isEqualTo(DeadLetter.Cause.SCHEMA);
            assertThat(r.reason()).isEqualTo("schema: /metadata: nested 33 levels deep, more than the 32 allowed");
        });
        assertThat(big.decode(utf8("d"), utf8(at.formatted(nested.apply(900)))))
                .isInstanceOf(DocumentDecoder.Rejected.class);
    }

    /** A number too large for a double would be kept as infinity and come back as the string "Infinity": refused. */
    /**
     * A schema's {@code $} is the end of the value, as in ECMA-262: a namespace or id that ends in a line feed (which
     * Java's engine lets {@code $} match before) can never be read or deleted over HTTP, so it is refused here too.
     */
    @Test
    void refusesANamespaceOrIdThatEndsInALineTerminator() {
        String json = "{\"namespace\":\"%s\",\"id\":\"%s\",\"op\":\"upsert\",\"text\":\"x\"}";
        assertThat(rejection("d", utf8(json.formatted("wiki\\n", "d")))).startsWith("schema: /namespace");
        assertThat(rejection("d\n", utf8(json.formatted("wiki", "d\\n")))).startsWith("schema: /id");
        assertThat(rejection("d", utf8(json.formatted("wiki\\r\\n", "d")))).startsWith("schema: /namespace");
        assertThat(decoder.decode(utf8("d"), utf8(json.formatted("wiki", "d"))))
                .isInstanceOf(DocumentDecoder.Accepted.class);
    }

    /** The schema's patterns run in linear time: an id or text at its limit, built to make a backtracking engine work. */
    @Test
    void patternsOnValuesAtTheirLimitsAreQuick() {
        DocumentDecoder big = new DocumentDecoder(1 << 20);
        String json = "{\"namespace\":\"%s\",\"id\":\"%s\",\"op\":\"upsert\",\"text\":\"%s\"}";
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertThat(big.decode(utf8("d"), utf8(json.formatted("a".repeat(128) + "!", "d", "x"))))
                    .isInstanceOf(DocumentDecoder.Rejected.class);
            assertThat(big.decode(utf8("d"), utf8(json.formatted("wiki", "d", " ".repeat(1_000_000) + "x"))))
                    .isInstanceOf(DocumentDecoder.Accepted.class);
            assertThat(big.decode(utf8("d"), utf8(json.formatted("wiki", "d", " ".repeat(1_000_000)))))
                    .isInstanceOf(DocumentDecoder.Rejected.class);
        });
    }

    @Test
    void refusesANumberOutOfRangeInsteadOfKeepingItAsInfinity() {
        String json =
                "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"x\",\"metadata\":{\"a\":[1, -1e400]}}";
        assertThat(rejection("d", utf8(json))).isEqualTo("schema: /metadata/a/1: a number out of range");
        assertThat(decoder.decode(utf8("d"), utf8(json.replace("-1e400", "1e300"))))
                .isInstanceOf(DocumentDecoder.Accepted.class);
    }

    @Test
    void aNullMetadataValueIsKeptAsNestedOnesAre() {
        DocumentDecoder.Result result = new DocumentDecoder(1 << 20)
                .decode(
                        utf8("d"),
                        utf8("{\"namespace\":\"a\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"x\","
                                + "\"metadata\":{\"k\":null,\"lang\":\"en\"}}"));
        assertThat(result).isInstanceOf(DocumentDecoder.Accepted.class);
        DocumentEvent event = ((DocumentDecoder.Accepted) result).event();
        assertThat(event.metadata()).containsEntry("k", null).containsEntry("lang", "en");
        assertThat(event.metadata().keySet()).containsExactly("k", "lang");
    }

    /**
     * Every one-place change of a full upsert (each value removed or replaced by values of every type, a field added),
     * every cut of its bytes and random bytes written over it are accepted or refused with a reason, never thrown.
     */
    @Test
    void neverThrowsOnAnyVariantOfADocumentEvent() {
        String json = """
                {"namespace":"wiki","id":"doc-1","op":"upsert","title":"T","text":"Some text.",
                 "source":"https://example.org/a","metadata":{"lang":"en","n":[1,{"a":null}]},
                 "event_time":"2024-05-01T10:00:00Z"}""";
        DocumentDecoder big = new DocumentDecoder(1 << 20);
        List<byte[]> values = new ArrayList<>();
        for (String m : Mutants.texts(Mutants.parse(json))) {
            values.add(utf8(m));
        }
        byte[] bytes = utf8(json);
        for (int i = 0; i < bytes.length; i++) {
            values.add(Arrays.copyOf(bytes, i));
        }
        Random random = new Random(20261126);
        for (int i = 0; i < 2_000; i++) {
            byte[] flipped = bytes.clone();
            flipped[random.nextInt(flipped.length)] = (byte) random.nextInt(256);
            values.add(flipped);
        }
        int accepted = 0;
        int refused = 0;
        for (byte[] value : values) {
            DocumentDecoder.Result result = big.decode(utf8("doc-1"), value);
            if (result instanceof DocumentDecoder.Rejected r) {
                assertThat(r.reason()).isNotBlank();
                refused++;
            } else {
                assertThat(result).isInstanceOf(DocumentDecoder.Accepted.class);
                accepted++;
            }
        }
        assertThat(accepted).isGreaterThan(100);
        assertThat(refused).isGreaterThan(1_000);
    }

    /** The schema validator cannot compare a number beyond a double's range with an enum's values: still refused. */
    @Test
    void refusesANumberOutOfRangeWhereTheSchemaAllowsOnlyWords() {
        String json = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":1e400,\"text\":\"x\"}";
        assertThat(rejection("d", utf8(json))).startsWith("schema: ").contains("Infinite");
    }

    /**
     * A new document's id is refused with C1 control characters or with nothing visible, as with C0 ones; a delete
     * still names a document written before these rules.
     */
    @Test
    void refusesNewIdsWithControlCharactersOrNothingVisible() {
        for (String id :
                List.of("a\u0085b", "\u009f", "\u200b", "\u200b\u200e", " ", "\u3164", "\u2800", "\ufe0f", "\u0301")) {
            String json = Json.toString(Map.of("namespace", "wiki", "id", id, "op", "upsert", "text", "x"));
            assertThat(rejection(id, utf8(json))).as(id).startsWith("schema: ");
            String delete = Json.toString(Map.of("namespace", "wiki", "id", id, "op", "delete"));
            assertThat(decoder.decode(utf8(id), utf8(delete))).as(id).isInstanceOf(DocumentDecoder.Accepted.class);
        }
        assertThat(DocumentDecoder.visible("e\u0301"))
                .as("a letter with its accent")
                .isTrue();
        assertThat(DocumentDecoder.visible("\u2764\ufe0f"))
                .as("an emoji with its selector")
                .isTrue();
        String fine = "caf\u00e9\u200b";
        assertThat(decoder.decode(
                        utf8(fine), utf8(Json.toString(Map.of("namespace", "wiki", "id", fine, "op", "delete")))))
                .isInstanceOf(DocumentDecoder.Accepted.class);
    }

    @Test
    void acceptsADeleteWithoutText() {
        DocumentDecoder.Result result =
                decoder.decode(utf8("doc-1"), utf8("{\"namespace\":\"wiki\",\"id\":\"doc-1\",\"op\":\"delete\"}"));

        assertThat(result).isInstanceOf(DocumentDecoder.Accepted.class);
        assertThat(((DocumentDecoder.Accepted) result).event().op()).isEqualTo(DocumentEvent.Op.DELETE);
    }

    @Test
    void rejectsAnEventWithoutAKeyInsteadOfPartitioningItAtRandom() {
        DocumentDecoder.Result result =
                decoder.decode(null, utf8("{\"namespace\":\"wiki\",\"id\":\"doc-1\",\"op\":\"delete\"}"));

        assertThat(result).isInstanceOfSatisfying(DocumentDecoder.Rejected.class, r -> {
            assertThat(r.cause()).isEqualTo(DeadLetter.Cause.KEY_MISMATCH);
            assertThat(r.reason()).startsWith("no record key");
        });
    }

    @Test
    void rejectsAnEventTimeThatIsNoRfc3339DateTimeAndAcceptsOffsets() {
        for (String time : new String[] {"2024-02-30T00:00:00Z", "yesterday", "2024-05-01T10:00:00", "2024-05-01"}) {
            String json = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"x\",\"event_time\":\""
                    + time + "\"}";
            assertThat(rejection("d", utf8(json)))
                    .as(time)
                    .contains("/event_time")
                    .contains("RFC 3339");
        }
        String offset = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"x\","
                + "\"event_time\":\"2024-05-01T12:00:00+02:00\"}";
        DocumentDecoder.Result result = decoder.decode(utf8("d"), utf8(offset));
        assertThat(result).isInstanceOfSatisfying(DocumentDecoder.Accepted.class, a -> assertThat(
                        a.event().eventTime())
                .isEqualTo(Instant.parse("2024-05-01T10:00:00Z")));
        String number = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"x\",\"event_time\":12345}";
        assertThat(rejection("d", utf8(number))).contains("/event_time");
    }

    @Test
    void rejectsUnpairedSurrogatesWrittenAsEscapesAnywhereAndKeepsPairs() {
        for (String fields : new String[] {
            "\"text\":\"x\\ud800\"",
            "\"text\":\"x\\udc00y\"",
            "\"text\":\"x\",\"title\":\"\\ud83d\"",
            "\"text\":\"x\",\"metadata\":{\"tags\":[\"ok\",\"\\udfff\"]}",
            "\"text\":\"x\",\"metadata\":{\"\\ud800\":1}"
        }) {
            String json = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\"," + fields + "}";
            assertThat(rejection("d", utf8(json))).as(fields).contains("unpaired surrogate");
        }
        String pair = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"\\ud83d\\ude00\"}";
        assertThat(decoder.decode(utf8("d"), utf8(pair)))
                .isInstanceOfSatisfying(
                        DocumentDecoder.Accepted.class,
                        a -> assertThat(a.event().text()).isEqualTo("😀"));
    }

    @Test
    void rejectsATextWithNothingVisibleInIt() {
        for (String text : new String[] {
            " \\n\\t", "\\u0000", "\\u00a0\\u00a0", "\\u3000", "\\u200b\\ufeff", "\\u200f\\u200e", "\\u0007\\u001b"
        }) {
            String json = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"" + text + "\"}";
            DocumentDecoder.Result result = decoder.decode(utf8("d"), utf8(json));
            assertThat(result).as(text).isInstanceOfSatisfying(DocumentDecoder.Rejected.class, r -> {
                assertThat(r.cause()).isEqualTo(DeadLetter.Cause.SCHEMA);
                assertThat(r.reason()).contains("/text");
            });
        }
        for (String text : new String[] {"\\u200bA", "\\u00a0.", "😀", "\\u0645", "\\u0000x"}) {
            String json = "{\"namespace\":\"wiki\",\"id\":\"d\",\"op\":\"upsert\",\"text\":\"" + text + "\"}";
            assertThat(decoder.decode(utf8("d"), utf8(json))).as(text).isInstanceOf(DocumentDecoder.Accepted.class);
        }
    }

    @Test
    void rejectsMalformedJson() {
        assertThat(rejection(null, utf8("{\"namespace\":\"wiki\","))).startsWith("malformed JSON");
        assertThat(rejection(null, utf8("{} trailing"))).startsWith("malformed JSON");
        assertThat(rejection(null, utf8(""))).startsWith("malformed JSON");
    }

    @Test
    void rejectsDuplicateFields() {
        assertThat(rejection(null, utf8("{\"namespace\":\"a\",\"namespace\":\"b\",\"id\":\"x\",\"op\":\"delete\"}")))
                .startsWith("malformed JSON")
                .contains("namespace");
    }

    @Test
    void rejectsWrongTypesNamingTheField() {
        assertThat(rejection(null, utf8("{\"namespace\":\"wiki\",\"id\":7,\"op\":\"upsert\",\"text\":\"x\"}")))
                .startsWith("schema")
                .contains("id");
        assertThat(rejection(null, utf8("{\"namespace\":\"wiki\",\"id\":\"a\",\"op\":\"merge\",\"text\":\"x\"}")))
                .startsWith("schema")
                .contains("op");
        assertThat(rejection(null, utf8("[1,2,3]"))).startsWith("schema");
    }

    @Test
    void aTurnOfAConversationNamesItsSpeakerAndParticipantsWithTheirTypes() {
        String at = "{\"namespace\":\"chat\",\"id\":\"t1\",\"op\":\"upsert\",\"text\":\"Hi!\",\"metadata\":%s}";
        DocumentDecoder.Result ok = decoder.decode(
                utf8("t1"),
                utf8(at.formatted(
                        "{\"speaker\":\"Caroline\",\"participants\":[\"Caroline\",\"Melanie\"],\"session\":3}")));
        assertThat(ok).isInstanceOf(DocumentDecoder.Accepted.class);
        Conversation c = Conversation.of(((DocumentDecoder.Accepted) ok).event().metadata());
        assertThat(c).isEqualTo(new Conversation("Caroline", List.of("Caroline", "Melanie"), "3"));
        assertThat(c.addressee()).isEqualTo("Melanie");

        assertThat(rejection("t1", utf8(at.formatted("{\"speaker\":7}")))).contains("/metadata/speaker");
        assertThat(rejection("t1", utf8(at.formatted("{\"speaker\":\" \"}")))).contains("/metadata/speaker");
        assertThat(rejection("t1", utf8(at.formatted("{\"speaker\":\"%s\"}".formatted("x".repeat(201))))))
                .contains("/metadata/speaker");
        assertThat(rejection("t1", utf8(at.formatted("{\"speaker\":\"A\",\"participants\":\"A,B\"}"))))
                .contains("/metadata/participants");
        assertThat(rejection("t1", utf8(at.formatted("{\"speaker\":\"A\",\"participants\":[\"A\",2]}"))))
                .contains("/metadata/participants/1");
        assertThat(rejection("t1", utf8(at.formatted("{\"session\":{\"n\":1}}"))))
                .contains("/metadata/session");
        // without a speaker the metadata is free-form as before, and the document is no conversation's turn
        assertThat(Conversation.of(Map.of("lang", "en", "participants", List.of("A"))))
                .isNull();
    }

    @Test
    void rejectsAnUpsertWithoutTextOrWithBlankText() {
        assertThat(rejection(null, utf8("{\"namespace\":\"wiki\",\"id\":\"a\",\"op\":\"upsert\"}")))
                .startsWith("schema")
                .contains("text");
        assertThat(rejection(null, utf8("{\"namespace\":\"wiki\",\"id\":\"a\",\"op\":\"upsert\",\"text\":\" \\n \"}")))
                .startsWith("schema");
    }

    @Test
    void rejectsBadNamespacesAndUnknownFields() {
        assertThat(rejection(null, utf8("{\"namespace\":\"../etc\",\"id\":\"a\",\"op\":\"delete\"}")))
                .contains("namespace");
        assertThat(rejection(null, utf8("{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"delete\",\"colour\":1}")))
                .contains("colour");
    }

    @Test
    void rejectsControlCharactersInIds() {
        assertThat(rejection(null, utf8("{\"namespace\":\"w\",\"id\":\"a\\u0000b\",\"op\":\"delete\"}")))
                .startsWith("schema")
                .contains("id");
    }

    @Test
    void rejectsInvalidUtf8() {
        byte[] bad = {'{', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        assertThat(rejection(null, bad)).isEqualTo("invalid UTF-8 in value");
    }

    @Test
    void rejectsDocumentsOverTheSizeLimit() {
        String big = "{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"upsert\",\"text\":\"" + "x".repeat(5000) + "\"}";
        assertThat(rejection(null, utf8(big))).contains("above the limit of 4096");
    }

    @Test
    void aDocumentOfExactlyTheLimitIsReadAndOneByteMoreIsNot() {
        String head = "{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"upsert\",\"text\":\"";
        String tail = "\"}";
        String atLimit = head + "x".repeat(4096 - head.length() - tail.length()) + tail;
        assertThat(utf8(atLimit)).hasSize(4096);

        assertThat(decoder.decode(utf8("a"), utf8(atLimit))).isInstanceOf(DocumentDecoder.Accepted.class);
        assertThat(rejection("a", utf8(atLimit.replace(tail, "x" + tail))))
                .isEqualTo("document event is 4097 bytes, above the limit of 4096");
    }

    @Test
    void rejectsAKeyThatIsNotTheDocumentId() {
        assertThat(rejection("other", utf8("{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"delete\"}")))
                .startsWith("key 'other' differs");
    }

    @Test
    void rejectsNullValues() {
        assertThat(rejection("a", null)).startsWith("null value");
    }

    @Test
    void everyRejectionCarriesTheCauseItsReasonNames() {
        byte[] badUtf8 = {'{', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        String big = "{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"upsert\",\"text\":\"" + "x".repeat(5000) + "\"}";
        byte[] delete = utf8("{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"delete\"}");
        assertThat(cause(null, utf8("{\"namespace\":"))).isEqualTo(DeadLetter.Cause.MALFORMED_JSON);
        assertThat(cause(null, utf8(""))).isEqualTo(DeadLetter.Cause.MALFORMED_JSON);
        assertThat(cause(null, utf8("[1,2,3]"))).isEqualTo(DeadLetter.Cause.SCHEMA);
        assertThat(cause(null, badUtf8)).isEqualTo(DeadLetter.Cause.INVALID_UTF8);
        assertThat(cause(new byte[] {(byte) 0xC3, (byte) 0x28}, delete)).isEqualTo(DeadLetter.Cause.INVALID_UTF8);
        assertThat(cause(null, utf8(big))).isEqualTo(DeadLetter.Cause.TOO_LARGE);
        assertThat(cause(utf8("other"), delete)).isEqualTo(DeadLetter.Cause.KEY_MISMATCH);
        assertThat(cause(utf8("a"), null)).isEqualTo(DeadLetter.Cause.NULL_VALUE);
    }

    private DeadLetter.Cause cause(byte[] key, byte[] value) {
        DocumentDecoder.Result result = decoder.decode(key, value);
        assertThat(result).isInstanceOf(DocumentDecoder.Rejected.class);
        return ((DocumentDecoder.Rejected) result).cause();
    }

    @Test
    void rejectsBadEventTimes() {
        assertThat(rejection(
                        null,
                        utf8("{\"namespace\":\"w\",\"id\":\"a\",\"op\":\"delete\",\"event_time\":\"yesterday\"}")))
                .contains("event_time");
    }
}
