package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Who may read the standalone sink's metrics. */
class SinkCommandTest {

    @Test
    void metricsNeedAKeyOfEveryNamespaceUnlessAuthIsDisabled() {
        ApiKeys keys = new ApiKeys(ApiKeys.parseInline("read:*:0perator-key;admin:notes:tenant-key"));
        assertThat(SinkCommand.refusal(keys, "0perator-key")).isNull();
        assertThat(SinkCommand.refusal(keys, "tenant-key")).isEqualTo("forbidden");
        assertThat(SinkCommand.refusal(keys, "guess")).isEqualTo("unauthorized");
        assertThat(SinkCommand.refusal(keys, null)).isEqualTo("unauthorized");
        assertThat(SinkCommand.refusal(keys, "")).isEqualTo("unauthorized");
        assertThat(SinkCommand.refusal(null, null)).as("ENGRAM_AUTH=disabled").isNull();
    }
}
