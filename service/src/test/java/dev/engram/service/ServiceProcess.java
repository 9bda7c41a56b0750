package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.service.app.EngramMain;
import dev.engram.topology.Topics;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
            String tail = tail(log);
            String main = mainThread(p, log);
            p.destroyForcibly();
            throw new AssertionError(
                    "the instance did not start; the end of its log (" + log + "):\n" + tail + "\nits main thread:\n"
                            + main,
                    e);
        }
        assertThat(p.isAlive())
                .as("the instance runs; the end of its log (%s):%n%s", log, tail(log))
                .isTrue();
        return new ServiceProcess(p, base, new Topics(env.get("ENGRAM_TOPIC_PREFIX")));
    }

    /** The last lines of an instance's log, for a failure message: CI keeps the build's output, not its files. */
    static String tail(Path log) {
        try {
            List<String> lines = new String(Files.readAllBytes(log), StandardCharsets.UTF_8)
                    .lines()
                    .toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** Where a stuck instance's main thread is: a thread dump (SIGQUIT) goes to its log; its {@code "main"} entry. */
    private static String mainThread(Process p, Path log) {
        try {
            long before = Files.size(log);
            new ProcessBuilder("kill", "-QUIT", Long.toString(p.pid())).start().waitFor();
            Thread.sleep(2000);
            byte[] all = Files.readAllBytes(log);
            String dump = new String(all, (int) before, all.length - (int) before, StandardCharsets.UTF_8);
            int at = dump.indexOf("\n\"main\"");
            if (at < 0) {
                return "(no thread dump)";
            }
            int end = dump.indexOf("\n\n", at + 1);
            return dump.substring(at + 1, end < 0 ? dump.length() : end);
        } catch (IOException | InterruptedException | RuntimeException e) {
            return "(no thread dump: " + e + ")";
        }
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
