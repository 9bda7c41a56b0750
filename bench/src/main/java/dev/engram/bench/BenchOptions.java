package dev.engram.bench;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The options of a benchmark's command line ({@code ./engram bench NAME --option value ...}), read by picocli: each
 * benchmark names the options it takes, and gets those given as a map of name to value. {@code --help} lists them
 * (and exits 0); an unknown or repeated option, or one without its value, is a usage error (exit 2), named before
 * anything runs. Their meaning and defaults are in bench/README.md.
 */
final class BenchOptions {

    private BenchOptions() {}

    /** The benchmark is not to run: its usage was asked for (code 0) or its options are wrong (code 2). */
    static final class Exit extends RuntimeException {
        private static final long serialVersionUID = 1L;

        final int code;

        Exit(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    /**
     * The options of {@code args} for the benchmark {@code name}, which takes the options {@code names}. On {@code
     * --help} the usage is printed, and on a usage error the error; either ends the benchmark with an {@link Exit}.
     */
    static Map<String, String> parse(String name, String[] args, String... names) {
        CommandLine line = new CommandLine(spec(name, names));
        try {
            CommandLine.ParseResult parsed = line.parseArgs(args);
            if (parsed.isUsageHelpRequested()) {
                line.usage(new PrintWriter(System.out, true, StandardCharsets.UTF_8));
                throw new Exit(0, "usage");
            }
            return values(parsed);
        } catch (CommandLine.ParameterException e) {
            throw new Exit(2, "engram bench " + name + ": " + e.getMessage() + " (--help for its options)");
        }
    }

    /** The options of {@code args}, or the usage error as an exception (for tests). */
    static Map<String, String> read(String name, String[] args, String... names) {
        return values(new CommandLine(spec(name, names)).parseArgs(args));
    }

    private static CommandSpec spec(String name, String... names) {
        CommandSpec spec = CommandSpec.create().name("engram bench " + name);
        spec.addOption(OptionSpec.builder("-h", "--help")
                .usageHelp(true)
                .description("Show this help message and exit.")
                .build());
        spec.usageMessage()
                .description("Options of the " + name + " benchmark: their meaning and defaults are in"
                        + " bench/README.md.");
        for (String option : names) {
            spec.addOption(OptionSpec.builder(option)
                    .arity("1")
                    .type(String.class)
                    .paramLabel("VALUE")
                    .build());
        }
        return spec;
    }

    private static Map<String, String> values(CommandLine.ParseResult parsed) {
        Map<String, String> out = new LinkedHashMap<>();
        for (OptionSpec o : parsed.matchedOptions()) {
            if (!o.usageHelp() && !o.versionHelp()) {
                out.put(o.longestName(), o.getValue());
            }
        }
        return out;
    }
}
