package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.topology.Topics;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An Engram instance in a process of its own, as an operator runs it: the packaged service (the jar and libraries the
 * package phase wrote before the integration tests), so a test can kill it for real.
 */
record ServiceProcess(Process process, String base, Topics topics) {

    /** The instances' logs, kept for a look after a failure. */
    static final Path LOGS = Path.of("target", "crash-logs");

    /** Starts the service with these ENGRAM_* variables and waits until it is ready. */
    static ServiceProcess start(Map<String, String> env, Path log) throws IOException {
        return start(env, log, "run", "/v1/health/ready");
    }

    /** Starts {@code engram <command>} and waits until {@code health} answers 200. */
    static ServiceProcess start(Map<String, String> env, Path log, String command, String health) throws IOException {
        Process p = launch(env, log, command);
        String base = "http://127.0.0.1:" + env.get("ENGRAM_HTTP_PORT");
        try {
            ItSupport.awaitResponse(
                    Duration.ofSeconds(120),
                    () -> ItSupport.get(base + health),
                    r -> r.status() == 200 || !p.isAlive());
        } catch (AssertionError e) {
            p.destroyForcibly();
            throw new AssertionError("the instance did not start; its log: " + log, e);
        }
        assertThat(p.isAlive()).as("the instance runs; its log: %s", log).isTrue();
        return new ServiceProcess(p, base, new Topics(env.get("ENGRAM_TOPIC_PREFIX")));
    }

    /** Launches {@code engram <command>} as it ships, with these ENGRAM_* variables, its output to {@code log}. */
    static Process launch(Map<String, String> env, Path log, String command) throws IOException {
        Files.createDirectories(LOGS);
        List<String> line = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 24) {
            line.add("--sun-misc-unsafe-memory-access=allow");
        }
        // the service as it ships: the jar and libraries the package phase wrote before the integration tests
        Path jar = Path.of("target", "engram.jar");
        assertThat(jar).as("the packaged service").exists();
        line.addAll(List.of(
                "-cp",
                jar + File.pathSeparator + Path.of("target", "lib") + File.separator + "*",
                EngramMain.class.getName(),
                command));
        ProcessBuilder pb = new ProcessBuilder(line);
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        return pb.start();
    }
}
