package dev.engram.service.cli;

import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramMain;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The command line of {@code ./engram} (picocli): {@code run}, {@code demo}, {@code eval}, {@code sink}, and the
 * clients of a running instance {@code ingest}, {@code query} and {@code status} ({@link ClientCommands}). Every
 * command answers {@code --help}; an unknown, repeated or malformed option is a usage error (exit 2) named on standard
 * error before anything runs.
 */
@Command(
        name = "engram",
        scope = CommandLine.ScopeType.INHERIT, // every command answers --help and --version
        mixinStandardHelpOptions = true,
        versionProvider = Cli.Version.class,
        description = "Streaming memory for LLM applications. Without a command: run.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:failed", "2:usage error"})
public final class Cli implements Callable<Integer> {

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;

    private static final String CLIENT_EXIT_CODES_HEADING = "%nExit codes:%n";

    private final Io io;

    /** Where a command reads its environment and writes its output. */
    record Io(Map<String, String> env, PrintStream out, PrintStream err) {}

    private Cli(Io io) {
        this.io = io;
    }

    /** Runs the command {@code args} name; returns its exit code. */
    public static int execute(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        Io io = new Io(env, out, err);
        CommandLine cli = new CommandLine(new Cli(io))
                .addSubcommand(new Run(io))
                .addSubcommand(new Demo(io))
                .addSubcommand(new Eval(io))
                .addSubcommand(new Sink(io))
                .addSubcommand(new Ingest(io))
                .addSubcommand(new Query(io))
                .addSubcommand(new Status(io))
                .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
                .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8))
                .setParameterExceptionHandler((e, a) -> {
                    err.println(e.getCommandLine().getCommandSpec().qualifiedName() + ": " + e.getMessage()
                            + " (--help for usage)");
                    return USAGE;
                })
                .setExecutionExceptionHandler((e, line, parsed) -> {
                    String name = line.getCommandSpec().qualifiedName();
                    if (e instanceof IllegalArgumentException) {
                        err.println(name + ": " + e.getMessage());
                        return USAGE;
                    }
                    err.println(name + ": failed: " + e);
                    return FAILED;
                });
        return cli.execute(args);
    }

    @Override
    public Integer call() {
        return EngramMain.serve(false, io.out(), io.err());
    }

    @Command(name = "run", description = "Serves as the environment configures it (the README's Configure section).")
    static class Run implements Callable<Integer> {
        private final Io io;
        private final boolean demo;

        Run(Io io) {
            this(io, false);
        }

        Run(Io io, boolean demo) {
            this.io = io;
            this.demo = demo;
        }

        @Override
        public Integer call() {
            return EngramMain.serve(demo, io.out(), io.err());
        }
    }

    @Command(
            name = "demo",
            description = "Serves this machine only, without keys, on an in-process Kafka broker, and ingests sample"
                    + " documents.")
    static final class Demo extends Run {
        Demo(Io io) {
            super(io, true);
        }
    }

    @Command(
            name = "sink",
            description = "Runs the mirror sink alone: the mirror topic into Neo4j and Qdrant, as configured.")
    static final class Sink implements Callable<Integer> {
        private final Io io;

        Sink(Io io) {
            this.io = io;
        }

        @Override
        public Integer call() throws Exception {
            // the sink's metrics follow ENGRAM_AUTH as the service's do
            SinkCommand.run(EngramConfig.from(io.env()), io.out());
            return OK;
        }
    }

    @Command(
            name = "eval",
            description = {
                "Ingests each set's corpus.jsonl through the real pipeline on an embedded broker, asks its"
                        + " questions.jsonl in each mode, and reports Recall@2 and Recall@5 with latency percentiles"
                        + " (docs/evaluation.md)."
            })
    static final class Eval implements Callable<Integer> {
        private final Io io;

        @Option(
                names = "--data",
                required = true,
                split = ",",
                paramLabel = "DIR",
                description = "the sets: directories with corpus.jsonl and questions.jsonl, comma-separated")
        List<Path> data;

        @Option(
                names = "--modes",
                split = ",",
                paramLabel = "MODE",
                description = "modes, each with parameters: dense,hybrid:context=0.2 (default: every mode)")
        List<String> modes;

        @Option(
                names = "--top-k",
                defaultValue = "5",
                paramLabel = "K",
                description = "results per question, 5-100 (default ${DEFAULT-VALUE})")
        int topK;

        @Option(names = "--out", paramLabel = "FILE", description = "where to write the results as JSON")
        Path out;

        @Option(
                names = "--per-question",
                arity = "1",
                defaultValue = "false",
                paramLabel = "true|false",
                description = "keep each question's gold ranks in the results (default ${DEFAULT-VALUE})")
        boolean perQuestion;

        @Option(
                names = "--serve",
                arity = "1",
                defaultValue = "false",
                paramLabel = "true|false",
                description = "serve the one set's memory afterwards, until stopped (default ${DEFAULT-VALUE})")
        boolean serve;

        @Option(
                names = "--keep",
                paramLabel = "WORKDIR",
                description = "keep each set's broker and state in WORKDIR/<set>; a later run asks that memory")
        Path keep;

        @Option(
                names = "--late-percent",
                defaultValue = "0",
                paramLabel = "P",
                description = "send the last P % of each corpus (a seeded random share) only once the whole query"
                        + " snapshot of the rest is built, and answer every question from that snapshot and the recent"
                        + " layer of the late documents beside it: what answers lose until the next whole snapshot,"
                        + " 0-50 (default ${DEFAULT-VALUE}: no late share)")
        int latePercent;

        Eval(Io io) {
            this.io = io;
        }

        EvalCommand.Settings settings() {
            return new EvalCommand.Settings(data, modes, topK, out, perQuestion, serve, keep, latePercent);
        }

        /** The settings {@code args} give, read as {@code engram eval} reads them. */
        static EvalCommand.Settings settings(List<String> args) {
            Eval eval = new Eval(null);
            try {
                new CommandLine(eval).parseArgs(args.toArray(String[]::new));
            } catch (CommandLine.ParameterException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            return eval.settings();
        }

        @Override
        public Integer call() throws Exception {
            EvalCommand.run(settings(), EngramConfig.local(io.env()), io.out());
            return OK;
        }
    }

    /** What every client command takes: the instance's URL. */
    abstract static class Client implements Callable<Integer> {
        final Io io;

        @Spec
        CommandSpec spec;

        @Option(
                names = "--url",
                paramLabel = "URL",
                description = "the instance (default: $ENGRAM_URL, else http://localhost:8080); the API key, when it"
                        + " needs one, comes from $ENGRAM_API_KEY")
        String url;

        Client(Io io) {
            this.io = io;
        }

        /** A namespace the service takes, else a usage error. */
        String namespace(String ns) {
            if (ns != null && !ClientCommands.NAMESPACE.matcher(ns).matches()) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--namespace must match " + ClientCommands.NAMESPACE.pattern() + ": '" + ns + "'");
            }
            return ns;
        }

        /** {@code value} of {@code option} when it is from {@code min} to {@code max}, else a usage error. */
        int within(String option, int value, int min, int max) {
            if (value < min || value > max) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), option + " must be an integer from " + min + " to " + max);
            }
            return value;
        }

        abstract int run(ClientCommands client) throws Exception;

        @Override
        public Integer call() throws Exception {
            String to = url != null ? url : io.env().getOrDefault("ENGRAM_URL", "http://localhost:8080");
            ClientCommands client = new ClientCommands(to, io.env().get("ENGRAM_API_KEY"), io.out(), io.err());
            try {
                return run(client);
            } catch (ConnectException e) {
                io.err()
                        .println(spec.qualifiedName() + ": no Engram instance answers at " + to
                                + " (start one with ./engram demo or ./engram run, or pass --url)");
                return ClientCommands.UNREACHABLE;
            } catch (IOException e) {
                io.err().println(spec.qualifiedName() + ": " + (e.getMessage() == null ? e : e.getMessage()));
                return FAILED;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return FAILED;
            }
        }
    }

    @Command(
            name = "ingest",
            description = {
                "Sends documents to the namespace and waits until each is in memory, with a progress line.",
                "PATH: files or folders; every .txt, .md, .markdown, .html, .htm and .pdf file is one document (its id:"
                        + " its path below the argument's folder; its title: an HTML page's <title>, a PDF's title,"
                        + " else its first '# ' heading, else its name; HTML and PDF are sent as their text), every"
                        + " line of a .jsonl file is one ({\"id\" or \"doc_id\", \"text\", \"title\", \"source\","
                        + " \"metadata\", \"event_time\"}; a line's other fields are not sent); other files are"
                        + " skipped."
            },
            exitCodeListHeading = CLIENT_EXIT_CODES_HEADING,
            exitCodeList = {
                "0:done",
                "1:refused or failed",
                "2:usage error",
                "3:not in memory as sent (not yet, or replaced by a later write of the same id)",
                "4:no instance answers at the URL"
            })
    static final class Ingest extends Client {
        @Option(names = "--namespace", required = true, paramLabel = "NS", description = "the namespace to write to")
        String namespace;

        @Option(
                names = "--concurrency",
                defaultValue = "8",
                paramLabel = "N",
                description = "documents in flight at once, 1-64 (default ${DEFAULT-VALUE})")
        int concurrency;

        @Option(
                names = "--state",
                paramLabel = "FILE",
                description = "what earlier runs got into memory (default .engram/ingest/NS.json): only documents new"
                        + " or changed since are sent")
        Path state;

        @Parameters(arity = "1..*", paramLabel = "PATH", description = "files or folders to send")
        List<String> paths;

        Ingest(Io io) {
            super(io);
        }

        @Override
        int run(ClientCommands client) throws Exception {
            return client.ingest(namespace(namespace), within("--concurrency", concurrency, 1, 64), state, paths);
        }
    }

    @Command(
            name = "query",
            description = "Retrieves the passages that best answer TEXT, as a table (or the API's JSON with --json"
                    + " true).",
            exitCodeListHeading = CLIENT_EXIT_CODES_HEADING,
            exitCodeList = {"0:done", "1:failed", "2:usage error", "4:no instance answers at the URL"})
    static final class Query extends Client {
        @Option(names = "--namespace", required = true, paramLabel = "NS", description = "the namespace to ask")
        String namespace;

        @Option(
                names = "--mode",
                defaultValue = "hybrid",
                paramLabel = "M",
                description = "dense, bm25, hybrid (default), cogito, como, gem, fusion, pabd (docs/retrieval.md)")
        String mode;

        @Option(
                names = "--top-k",
                defaultValue = "5",
                paramLabel = "K",
                description = "results, 1-100 (default ${DEFAULT-VALUE})")
        int topK;

        @Option(
                names = "--json",
                arity = "1",
                defaultValue = "false",
                paramLabel = "true|false",
                description = "print the API's JSON instead of a table (default ${DEFAULT-VALUE})")
        boolean json;

        @Parameters(
                arity = "1..*",
                paramLabel = "TEXT",
                description = "the question (after --, whatever it starts with)")
        List<String> text;

        Query(Io io) {
            super(io);
        }

        @Override
        int run(ClientCommands client) throws Exception {
            return client.query(namespace(namespace), mode, within("--top-k", topK, 1, 100), json, text);
        }
    }

    @Command(
            name = "status",
            description = "The instance's health and stream states; with --namespace, its documents by status,"
                    + " passages, entities and memory version.",
            exitCodeListHeading = CLIENT_EXIT_CODES_HEADING,
            exitCodeList = {"0:serving", "1:not serving, or a request failed", "2:usage error", "4:no instance"})
    static final class Status extends Client {
        @Option(names = "--namespace", paramLabel = "NS", description = "the namespace to describe")
        String namespace;

        Status(Io io) {
            super(io);
        }

        @Override
        int run(ClientCommands client) throws Exception {
            return client.status(namespace(namespace));
        }
    }

    /** The version in the jar's manifest, when it has one. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Cli.class.getPackage().getImplementationVersion();
            return new String[] {"engram " + (v == null ? "(development build)" : v)};
        }
    }
}
