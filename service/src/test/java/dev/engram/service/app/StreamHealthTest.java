package dev.engram.service.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.streams.KafkaStreams.State;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StreamHealthTest {

    private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

    private final AtomicReference<State> ingestState = new AtomicReference<>(State.RUNNING);
    private final AtomicReference<State> memoryState = new AtomicReference<>(State.RUNNING);
    private final StreamHealth.App ingest = new StreamHealth.App();
    private final StreamHealth.App memory = new StreamHealth.App();
    private StreamHealth health;

    @BeforeEach
    void track() {
        ingest.track(ingestState::get);
        memory.track(memoryState::get);
        health = new StreamHealth(ingest, memory, Clock.fixed(NOW, ZoneOffset.UTC), "host:1", "x", "y");
    }

    @Test
    void bothApplicationsRunningIsUpLiveAndReady() {
        Health h = health.health();

        assertThat(h.status()).isEqualTo("UP");
        assertThat(h.live()).isTrue();
        assertThat(h.ready()).isTrue();
        assertThat(h.serving()).isTrue();
    }

    @Test
    void anIngestApplicationInErrorIsNeitherLiveNorReadyWhileQueriesAreStillServed() {
        ingestState.set(State.ERROR);

        Health h = health.health();

        assertThat(h.status()).isEqualTo("DOWN");
        assertThat(h.live()).isFalse();
        assertThat(h.ready()).isFalse();
        assertThat(h.serving()).isTrue();
    }

    @Test
    void threadsFailingAgainAndAgainMakeARunningInstanceNotReady() {
        for (int i = 0; i < StreamHealth.REFAILING_THREADS; i++) {
            ingest.threadFailed(NOW.minusSeconds(10 * i));
        }

        Health h = health.health();

        assertThat(h.status()).isEqualTo("FAILING");
        assertThat(h.live()).isTrue();
        assertThat(h.ready()).isFalse();
        assertThat(h.ingestThreadFailures()).isEqualTo(StreamHealth.REFAILING_THREADS);
    }

    @Test
    void oldThreadFailuresAreForgotten() {
        for (int i = 0; i < StreamHealth.REFAILING_THREADS; i++) {
            memory.threadFailed(NOW.minus(StreamHealth.REFAILING_WINDOW).minusSeconds(1 + i));
        }
        memory.threadFailed(NOW.minusSeconds(1));

        Health h = health.health();

        assertThat(h.ready()).isTrue();
        assertThat(h.memoryThreadFailures()).isEqualTo(1);
    }

    @Test
    void rebalancingServesButIsNotReady() {
        memoryState.set(State.REBALANCING);

        Health h = health.health();

        assertThat(h.status()).isEqualTo("REBALANCING");
        assertThat(h.serving()).isTrue();
        assertThat(h.live()).isTrue();
        assertThat(h.ready()).isFalse();
    }
}
