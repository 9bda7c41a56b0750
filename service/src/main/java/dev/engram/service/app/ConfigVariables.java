package dev.engram.service.app;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/** Reads and checks {@code ENGRAM_*} variables; every message names the variable. */
record ConfigVariables(Map<String, String> variables) {

    private static final String KAFKA_PREFIX = "ENGRAM_KAFKA_";

    String string(String name, String fallback) {
        String v = variables.get(name);
        return v == null || v.isBlank() ? fallback : v.strip();
    }

    /**
     * Kafka client settings passed through: {@code ENGRAM_KAFKA_SASL_MECHANISM=PLAIN} becomes
     * {@code sasl.mechanism=PLAIN} (lower case, {@code _} read as {@code .}).
     */
    Map<String, String> kafkaClientProperties() {
        Map<String, String> out = new TreeMap<>();
        variables.forEach((name, value) -> {
            if (name.startsWith(KAFKA_PREFIX) && name.length() > KAFKA_PREFIX.length() && value != null) {
                String key = name.substring(KAFKA_PREFIX.length())
                        .toLowerCase(Locale.ROOT)
                        .replace('_', '.');
                if (EngramConfig.Kafka.RESERVED.contains(key)) {
                    throw invalid(name, "sets " + key + ", which Engram sets itself");
                }
                out.put(key, value);
            }
        });
        return out;
    }

    /** A name made of the given characters (ids, prefixes). */
    String name(String name, String fallback, String pattern) {
        String v = string(name, fallback);
        if (v != null && !v.matches(pattern)) {
            throw invalid(name, "must be letters, digits, '.', '_' or '-'");
        }
        return v;
    }

    int integer(String name, int fallback, int min, int max) {
        String v = string(name, null);
        if (v == null) {
            return fallback;
        }
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw invalid(name, "must be an integer, was '" + v + "'");
        }
        if (n < min || n > max) {
            throw invalid(name, max == Integer.MAX_VALUE ? "must be at least " + min : "must be " + min + "-" + max);
        }
        return n;
    }

    double decimal(String name, double fallback) {
        String v = string(name, null);
        if (v == null) {
            return fallback;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw invalid(name, "must be a number, was '" + v + "'");
        }
    }

    boolean bool(String name, boolean fallback) {
        String v = string(name, null);
        if (v == null) {
            return fallback;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw invalid(name, "must be true or false, was '" + v + "'");
        };
    }

    /** The comma-separated entries of a setting, blanks left out, each checked; a bad one names the setting. */
    static List<String> checkedList(String value, String name, UnaryOperator<String> check) {
        return Arrays.stream(value.split(","))
                .map(String::strip)
                .filter(v -> !v.isEmpty())
                .map(v -> {
                    try {
                        return check.apply(v);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(name + ": " + e.getMessage());
                    }
                })
                .toList();
    }

    static IllegalArgumentException invalid(String name, String message) {
        return new IllegalArgumentException("invalid configuration: " + name + " " + message);
    }
}
