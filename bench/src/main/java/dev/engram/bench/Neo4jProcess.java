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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The benchmarks' Neo4j ({@link Neo4jServer}), in the benchmark's JVM or, as every user's Neo4j runs, in a JVM of its
 * own ({@code --neo4j-process true}): there the benchmark's garbage collections never pause it. The process is driven
 * over its standard input with one command a line ({@code restart}, {@code stop}, {@code start}), and answers each
 * with a line on its standard output; its first line is its Bolt address.
 */
interface Neo4jProcess extends AutoCloseable {

    /** Marks the lines the process writes for the benchmark. */
    String PREFIX = "engram-neo4j ";

    /** The options of this JVM that Neo4j's JVM takes too. */
    List<String> JVM_OPTIONS = List.of("--enable-native-access", "--add-modules", "--add-opens", "--add-exports");

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
        // only what Neo4j needs to run as it does here: no heap sizes, agents, ports or log files of this JVM's
        for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (JVM_OPTIONS.stream().anyMatch(option::startsWith)) {
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
            // read all along, so that the process never waits for room to write
            BlockingQueue<String> answers = new LinkedBlockingQueue<>();
            Thread reader = new Thread(
                    () -> {
                        try (BufferedReader out =
                                new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8))) {
                            for (String line; (line = out.readLine()) != null; ) {
                                if (line.startsWith(PREFIX)) {
                                    answers.add(line.substring(PREFIX.length()));
                                } else {
                                    System.err.println(line);
                                }
                            }
                        } catch (IOException e) {
                            System.err.println("Neo4j's process: " + e);
                        }
                    },
                    "engram-neo4j-process");
            reader.setDaemon(true);
            reader.start();
            PrintStream in = new PrintStream(p.getOutputStream(), true, UTF_8);
            String uri = answer(answers, p);
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
                    String got = answer(answers, p);
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

    /** The next answer of the process, within two minutes. */
    private static String answer(BlockingQueue<String> answers, Process p) {
        try {
            String a = answers.poll(2, TimeUnit.MINUTES);
            if (a == null) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        p.isAlive() ? "Neo4j's process did not answer" : "Neo4j's process ended");
            }
            return a;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The process: Neo4j, and the commands on standard input until it closes. */
    final class Main {
        private Main() {}

        public static void main(String[] args) throws IOException {
            // the answers alone on standard output; whatever else is written goes to standard error
            PrintStream answers = System.out;
            System.setOut(System.err);
            Neo4jServer neo4j = Neo4jServer.shared();
            answers.println(PREFIX + neo4j.uri());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                switch (line) {
                    case "restart" -> neo4j.restartEmpty();
                    case "stop" -> neo4j.stop();
                    case "start" -> neo4j.start();
                    default -> {
                        answers.println(PREFIX + "unknown command " + line);
                        continue;
                    }
                }
                answers.println(PREFIX + "ok");
            }
            neo4j.stop();
            System.exit(0);
        }
    }
}
