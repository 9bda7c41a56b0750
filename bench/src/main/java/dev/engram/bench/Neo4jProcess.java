package dev.engram.bench;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.engram.sinks.Neo4jServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The benchmarks' Neo4j ({@link Neo4jServer}), in the benchmark's JVM or, as every user's Neo4j runs, in a JVM of its
 * own ({@code --neo4j-process true}): there the benchmark's garbage collections never pause it. The process is driven
 * over its standard input with one command a line ({@code restart}, {@code stop}, {@code start}), and answers each
 * with a line on its standard output; its first line is its Bolt address.
 */
interface Neo4jProcess extends AutoCloseable {

    /** Marks the lines the process writes for the benchmark, among Neo4j's own. */
    String PREFIX = "engram-neo4j ";

    String uri();

    /** Stops Neo4j, deletes its store and starts it again on an empty one at the same address. */
    void restartEmpty();

    void stop();

    void start();

    @Override
    void close();

    /** Neo4j in this JVM. */
    static Neo4jProcess inThisJvm() {
        Neo4jServer neo4j = Neo4jServer.shared();
        return new Neo4jProcess() {
            @Override
            public String uri() {
                return neo4j.uri();
            }

            @Override
            public void restartEmpty() {
                neo4j.restartEmpty();
            }

            @Override
            public void stop() {
                neo4j.stop();
            }

            @Override
            public void start() {
                neo4j.start();
            }

            @Override
            public void close() {
                neo4j.stop();
            }
        };
    }

    /** Neo4j in a JVM of its own with a heap of {@code heapMb}, on this JVM's class path and options. */
    static Neo4jProcess ownJvm(int heapMb) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!option.startsWith("-Xmx") && !option.startsWith("-XX:StartFlightRecording")) {
                command.add(option);
            }
        }
        command.add("-Xmx" + heapMb + "m");
        String pageCache = System.getProperty("engram.neo4j.pagecache.mb");
        if (pageCache != null) {
            command.add("-Dengram.neo4j.pagecache.mb=" + pageCache);
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        try {
            Process p = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8));
            PrintStream in = new PrintStream(p.getOutputStream(), true, UTF_8);
            String uri = answer(out);
            return new Neo4jProcess() {
                @Override
                public String uri() {
                    return uri;
                }

                @Override
                public void restartEmpty() {
                    command("restart");
                }

                @Override
                public void stop() {
                    command("stop");
                }

                @Override
                public void start() {
                    command("start");
                }

                private void command(String c) {
                    in.println(c);
                    String got = answer(out);
                    if (!got.equals("ok")) {
                        throw new IllegalStateException("Neo4j's process answered " + got + " to " + c);
                    }
                }

                @Override
                public void close() {
                    in.close();
                    try {
                        if (!p.waitFor(60, TimeUnit.SECONDS)) {
                            p.destroyForcibly();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        p.destroyForcibly();
                    }
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next line the process wrote for the benchmark. */
    private static String answer(BufferedReader out) {
        try {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith(PREFIX)) {
                    return line.substring(PREFIX.length());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("Neo4j's process ended");
    }

    /** The process: Neo4j, and the commands on standard input until it closes. */
    final class Main {
        private Main() {}

        public static void main(String[] args) throws IOException {
            Neo4jServer neo4j = Neo4jServer.shared();
            System.out.println(PREFIX + neo4j.uri());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                switch (line) {
                    case "restart" -> neo4j.restartEmpty();
                    case "stop" -> neo4j.stop();
                    case "start" -> neo4j.start();
                    default -> {
                        System.out.println(PREFIX + "unknown command " + line);
                        continue;
                    }
                }
                System.out.println(PREFIX + "ok");
            }
            neo4j.stop();
            System.exit(0);
        }
    }
}
