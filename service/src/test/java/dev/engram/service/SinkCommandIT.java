package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code engram sink}, as it ships, refuses settings it cannot work with: exit status 2 and the variable named. */
class SinkCommandIT {

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "no cluster | ENGRAM_NEO4J_URI=bolt://localhost:7687 | ENGRAM_BOOTSTRAP_SERVERS",
                "no mirror | ENGRAM_BOOTSTRAP_SERVERS=localhost:9092 | ENGRAM_NEO4J_URI, ENGRAM_QDRANT_URL",
                "bad Neo4j address | ENGRAM_BOOTSTRAP_SERVERS=localhost:9092;ENGRAM_NEO4J_URI=http://graph:7474 |"
                        + " ENGRAM_NEO4J_URI",
                "bad Qdrant address | ENGRAM_BOOTSTRAP_SERVERS=localhost:9092;ENGRAM_QDRANT_URL=http:// |"
                        + " ENGRAM_QDRANT_URL",
                "bad batch size | ENGRAM_BOOTSTRAP_SERVERS=localhost:9092;ENGRAM_QDRANT_URL=q:6334;"
                        + "ENGRAM_SINK_BATCH_SIZE=0 | ENGRAM_SINK_BATCH_SIZE",
                "no keys | ENGRAM_BOOTSTRAP_SERVERS=localhost:9092;ENGRAM_QDRANT_URL=q:6334;ENGRAM_AUTH=required |"
                        + " ENGRAM_API_KEYS"
            })
    void badSettingsExitWithStatusTwoNamingTheVariable(String name, String settings, String named) throws Exception {
        Map<String, String> env = new HashMap<>();
        for (String kv : settings.split(";")) {
            String[] parts = kv.split("=", 2);
            env.put(parts[0], parts[1]);
        }
        env.putIfAbsent("ENGRAM_AUTH", "disabled"); // the sink follows ENGRAM_AUTH as the service does
        env.put("ENGRAM_HTTP_PORT", Integer.toString(ItSupport.freePort()));
        Path log = ServiceProcess.LOGS.resolve("sink-settings-" + name.replace(' ', '-') + ".log");
        Process p = ServiceProcess.launch(env, log, "sink");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the sink exits").isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(Files.readString(log)).startsWith("engram sink: ").contains(named);
    }
}
