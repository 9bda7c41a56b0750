package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DocumentWriterTest {

    @Test
    void anIdIsOnePathSegmentWhateverItHolds() {
        assertThat(DocumentWriter.segment("notes/ada.md")).isEqualTo("notes%2Fada.md");
        assertThat(DocumentWriter.segment("a b?c#d%e")).isEqualTo("a%20b%3Fc%23d%25e");
        assertThat(DocumentWriter.segment("Ünïcode")).isEqualTo("%C3%9Cn%C3%AFcode");
        // a client or proxy that normalizes paths would resolve these against the parent
        assertThat(DocumentWriter.segment("..")).isEqualTo("%2E%2E");
        assertThat(DocumentWriter.segment(".")).isEqualTo("%2E");
        assertThat(DocumentWriter.segment("...")).isEqualTo("...");
    }

    @Test
    void documentIdsFollowTheEventSchema() {
        assertThat(Routes.validId("x".repeat(512))).isTrue();
        assertThat(Routes.validId("x".repeat(513))).isFalse();
        assertThat(Routes.validId("😀".repeat(512))).isTrue(); // 512 characters, 1,024 UTF-16 units
        assertThat(Routes.validId("a\u0085b")).isTrue(); // C1 controls are allowed by the schema
        assertThat(Routes.validId("a\u0000b")).isFalse();
        assertThat(Routes.validId("a\u007fb")).isFalse();
        assertThat(Routes.validId("")).isFalse();
    }
}
