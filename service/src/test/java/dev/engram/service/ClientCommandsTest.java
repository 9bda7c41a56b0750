package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ClientCommandsTest {

    @Test
    void thePipelineLineReadsEachStepsLagAndTheOutcomesFromTheMetrics() {
        String scrape = """
                # HELP kafka_consumer_fetch_manager_records_lag_max The max lag
                # TYPE kafka_consumer_fetch_manager_records_lag_max gauge
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-ingest-1b2c-StreamThread-1-consumer",kafka_version="4.3.1"} 12.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-ingest-1b2c-StreamThread-2-consumer",kafka_version="4.3.1"} 40.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-9f8e-StreamThread-1-consumer",kafka_version="4.3.1"} 3.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-9f8e-global-consumer",kafka_version="4.3.1"} 900.0
                kafka_consumer_fetch_manager_records_lag_max{client_id="engram-9f8e-StreamThread-2-consumer",kafka_version="4.3.1"} NaN
                engram_documents_total{outcome="upserted"} 7.0
                engram_documents_total{outcome="unchanged"} 0.0
                engram_documents_total{outcome="deleted"} 2.0
                engram_dead_letters_total{cause="malformed_json",stage="read"} 1.0
                engram_dead_letters_total{cause="schema",stage="read"} 2.0
                engram_dead_letters_total{cause="error",stage="construct"} 1.0
                """;

        ClientCommands.Pipeline p = ClientCommands.Pipeline.of(scrape);

        assertThat(p.ingestLag()).isEqualTo(40.0);
        assertThat(p.memoryLag()).isEqualTo(3.0); // the global store's consumer is not a step; NaN is no value
        assertThat(p.documents()).isEqualTo(Map.of("upserted", 7L, "deleted", 2L));
        assertThat(p.deadLetters()).isEqualTo(Map.of("read", 3L, "construct", 1L));
        assertThat(p.sinks()).isEqualTo("none on this instance");
        assertThat(ClientCommands.Pipeline.of(
                                "engram_sink_lag_records{sink=\"neo4j\"} 5\nengram_sink_paused{sink=\"neo4j\"} 1\n")
                        .sinks())
                .isEqualTo("5 mirror records behind, 1 partitions paused");
    }
}
