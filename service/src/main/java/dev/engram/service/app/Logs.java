package dev.engram.service.app;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.ConsoleHandler;
import java.util.logging.FileHandler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * Where the service's log lines go (java.util.logging, which SLF4J writes to through slf4j-jdk14). The console says
 * what a user must act on: Engram's own information, the libraries' warnings and errors. The embedded broker's log,
 * and the warnings of Kafka's producer about errors it retries by itself under transactions ({@code
 * CONCURRENT_TRANSACTIONS}, {@code OutOfOrderSequenceException} after a restart), go to a file beside the broker's
 * data: all of the broker's (it logs the producers' retried errors as errors), and the producer's warnings; the
 * producer's errors reach the console too.
 */
final class Logs {

    /** The loggers of the broker's own classes (the client classes are elsewhere under org.apache.kafka). */
    static final List<String> BROKER = List.of(
            "kafka",
            "org.apache.kafka.controller",
            "org.apache.kafka.coordinator",
            "org.apache.kafka.image",
            "org.apache.kafka.metadata",
            "org.apache.kafka.network",
            "org.apache.kafka.queue",
            "org.apache.kafka.raft",
            "org.apache.kafka.security",
            "org.apache.kafka.server",
            "org.apache.kafka.snapshot",
            "org.apache.kafka.storage",
            "org.apache.kafka.timeline");

    /** The producer's classes that warn of errors they retry themselves. */
    static final List<String> RETRYING = List.of(
            "org.apache.kafka.clients.producer.internals.Sender",
            "org.apache.kafka.clients.producer.internals.TransactionManager");

    /** java.util.logging keeps loggers weakly: these hold the configured ones. */
    private static final List<Logger> CONFIGURED = new ArrayList<>();

    private Logs() {}

    /**
     * The console's configuration, from {@code engram-logging.properties}; an operator's own file (the system property
     * {@code java.util.logging.config.file}) wins.
     */
    static void configure() {
        if (System.getProperty("java.util.logging.config.file") != null) {
            return;
        }
        try (InputStream in = Logs.class.getResourceAsStream("/engram-logging.properties")) {
            if (in != null) {
                LogManager.getLogManager().readConfiguration(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the logging configuration", e);
        }
    }

    /**
     * Sends the embedded broker's log, and the producer's warnings of retried errors, to {@code file} (started afresh
     * once it holds 64 MiB; java.util.logging keeps a lock file beside it while the service runs).
     */
    static synchronized void brokerTo(Path file) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            FileHandler toFile = new FileHandler(file.toString(), 64 << 20, 1, true);
            toFile.setFormatter(new LogFormat());
            toFile.setLevel(Level.ALL);
            ConsoleHandler errors = new ConsoleHandler();
            errors.setFormatter(new LogFormat());
            errors.setLevel(Level.SEVERE);
            for (String name : BROKER) {
                route(name, Level.INFO, toFile, null); // its errors too: retried sequence errors after a restart
            }
            for (String name : RETRYING) {
                route(name, Level.WARNING, toFile, errors);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the broker's log to " + file, e);
        }
    }

    private static void route(String name, Level level, FileHandler toFile, ConsoleHandler errors) {
        Logger logger = Logger.getLogger(name);
        logger.setUseParentHandlers(false);
        logger.setLevel(level);
        logger.addHandler(toFile);
        if (errors != null) {
            logger.addHandler(errors);
        }
        CONFIGURED.add(logger);
    }
}
