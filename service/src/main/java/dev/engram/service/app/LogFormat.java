package dev.engram.service.app;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/** One line per record: {@code 12:34:56.789 WARN Logger - message}, with the stack trace of a failure after it. */
public final class LogFormat extends Formatter {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    @Override
    public String format(LogRecord r) {
        String logger = r.getLoggerName() == null ? "" : r.getLoggerName();
        StringBuilder out = new StringBuilder(128)
                .append(TIME.format(LocalTime.ofInstant(r.getInstant(), ZoneId.systemDefault())))
                .append(' ')
                .append(level(r.getLevel()))
                .append(' ')
                .append(logger.substring(logger.lastIndexOf('.') + 1))
                .append(" - ")
                .append(formatMessage(r))
                .append(System.lineSeparator());
        if (r.getThrown() != null) {
            StringWriter trace = new StringWriter();
            r.getThrown().printStackTrace(new PrintWriter(trace));
            out.append(trace);
        }
        return out.toString();
    }

    /** SLF4J's names of the levels it logs at. */
    private static String level(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "ERROR";
        }
        if (v >= Level.WARNING.intValue()) {
            return "WARN";
        }
        if (v >= Level.INFO.intValue()) {
            return "INFO";
        }
        return v >= Level.FINE.intValue() ? "DEBUG" : "TRACE";
    }
}
