package dev.engram.schemas;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.math.BigDecimal;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A check, allocating next to nothing, that answers for most instances whether they are valid under a schema written
 * in a small subset of JSON Schema 2020-12; {@link Schemas} asks it before the full validator, which then judges only
 * what this check is not sure of, and words every error.
 *
 * <p>It answers {@link Verdict#VALID} or {@link Verdict#INVALID} only where the full validator cannot judge otherwise,
 * and {@link Verdict#UNSURE} everywhere else: a number written with a fraction where an integer is asked for, a
 * number beyond 2^53 in magnitude or an infinity, a date-time in another form than {@code yyyy-MM-ddTHH:mm:ss[.f]Z}, a
 * string whose length in code points may differ from its length in UTF-16 units at a limit. {@code QuickCheckTest}
 * holds it to that against the full validator. A schema with any keyword outside the subset, another dialect than
 * 2020-12, a reference outside its document's {@code $defs} or a reference cycle that never descends into a value is
 * not compiled at all ({@link #compile} is empty), and the full validator judges every instance.
 *
 * <p>The subset: boolean schemas; {@code type}, {@code enum} and {@code const} of strings, booleans and null;
 * {@code required}, {@code properties}, {@code additionalProperties: false}, {@code items} (one schema), {@code
 * minimum} and {@code maximum} (integers up to 2^53), {@code minLength}, {@code maxLength}, {@code format:
 * date-time}, {@code allOf}, {@code if}/{@code then}/{@code else} and {@code $ref} to the document's own {@code
 * $defs}; annotations ({@code title}, {@code description}, {@code contentEncoding}…) are skipped, as they assert
 * nothing under 2020-12.
 */
final class QuickCheck {

    /** What the check can tell of an instance. */
    enum Verdict {
        VALID,
        INVALID,
        /** The full validator must judge. */
        UNSURE;

        Verdict and(Verdict other) {
            if (this == INVALID || other == INVALID) {
                return INVALID;
            }
            return this == UNSURE || other == UNSURE ? UNSURE : VALID;
        }
    }

    /** One compiled (sub)schema. */
    @FunctionalInterface
    interface Check {
        Verdict test(JsonNode instance);
    }

    /**
     * Keywords that assert nothing under 2020-12 with the full validator's settings in {@link Schemas} ({@code
     * readOnly} and {@code writeOnly} can be made to assert, so they are not among them).
     */
    private static final Set<String> ANNOTATIONS = Set.of(
            "$comment",
            "title",
            "description",
            "examples",
            "default",
            "deprecated",
            "contentEncoding",
            "contentMediaType",
            "$defs");

    /** The one dialect the check follows; a document declaring another one is judged by the full validator. */
    private static final String DIALECT = "https://json-schema.org/draft/2020-12/schema";

    /** Numbers a double holds exactly with every integer up to them: bounds and values beyond are not judged. */
    private static final double EXACT = 0x1p53;

    private final JsonNode root;
    /** Compiled {@code $defs}, filled as references are met, so that a definition referring to itself compiles. */
    private final Map<String, Check[]> definitions = new HashMap<>();
    /** Definitions being compiled, innermost last; "" marks a descent into a value's parts (properties, items). */
    private final List<String> compiling = new ArrayList<>();

    private QuickCheck(JsonNode root) {
        this.root = root;
    }

    /** The check of {@code schema} (a whole schema document), or empty when it uses anything outside the subset. */
    static Optional<Check> compile(JsonNode schema) {
        try {
            return Optional.of(new QuickCheck(schema).of(schema, true));
        } catch (Unsupported e) {
            return Optional.empty();
        }
    }

    /** A schema this check does not cover. */
    private static final class Unsupported extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unsupported(String what) {
            super(what, null, false, false);
        }
    }

    private Check of(JsonNode schema, boolean isRoot) {
        if (schema.isBoolean()) {
            Verdict v = schema.booleanValue() ? Verdict.VALID : Verdict.INVALID;
            return instance -> v;
        }
        if (!schema.isObject()) {
            throw new Unsupported("schema " + schema);
        }
        List<Check> checks = new ArrayList<>();
        for (Map.Entry<String, JsonNode> f : schema.properties()) {
            String keyword = f.getKey();
            JsonNode value = f.getValue();
            if (ANNOTATIONS.contains(keyword) || (isRoot && keyword.equals("$id"))) {
                continue;
            }
            if (isRoot && keyword.equals("$schema")) {
                if (!value.asText().replaceFirst("#$", "").equals(DIALECT)) {
                    throw new Unsupported("$schema " + value);
                }
                continue;
            }
            switch (keyword) {
                case "type" -> checks.add(type(value));
                case "enum" -> checks.add(oneOfValues(value));
                case "const" ->
                    checks.add(oneOfValues(JsonNodeFactory.instance.arrayNode().add(value)));
                case "required" -> checks.add(required(value));
                case "properties" -> checks.add(properties(value));
                case "additionalProperties" -> checks.add(noOtherProperties(schema, value));
                case "items" -> checks.add(items(value));
                case "minimum" -> checks.add(bound(value, true));
                case "maximum" -> checks.add(bound(value, false));
                case "minLength" -> checks.add(length(value, true));
                case "maxLength" -> checks.add(length(value, false));
                case "format" -> checks.add(format(value));
                case "allOf" -> checks.add(allOf(value));
                case "if" -> checks.add(conditional(schema));
                case "then", "else" -> {
                    // judged with their "if"; without one they assert nothing
                }
                case "$ref" -> checks.add(reference(value));
                default -> throw new Unsupported(keyword);
            }
        }
        Check[] all = checks.toArray(Check[]::new);
        return instance -> all(all, instance);
    }

    private static Verdict all(Check[] checks, JsonNode instance) {
        Verdict v = Verdict.VALID;
        for (Check c : checks) {
            v = v.and(c.test(instance));
            if (v == Verdict.INVALID) {
                return v;
            }
        }
        return v;
    }

    private static Check type(JsonNode value) {
        List<String> names = new ArrayList<>();
        if (value.isTextual()) {
            names.add(value.textValue());
        } else if (value.isArray()) {
            value.forEach(n -> names.add(n.asText()));
        } else {
            throw new Unsupported("type " + value);
        }
        for (String n : names) {
            if (!Set.of("object", "array", "string", "integer", "number", "boolean", "null")
                    .contains(n)) {
                throw new Unsupported("type " + n);
            }
        }
        boolean object = names.contains("object");
        boolean array = names.contains("array");
        boolean string = names.contains("string");
        boolean integer = names.contains("integer");
        boolean number = names.contains("number");
        boolean bool = names.contains("boolean");
        boolean nul = names.contains("null");
        return instance -> {
            if (instance.isObject()) {
                return object ? Verdict.VALID : Verdict.INVALID;
            }
            if (instance.isArray()) {
                return array ? Verdict.VALID : Verdict.INVALID;
            }
            if (instance.isTextual()) {
                return string ? Verdict.VALID : Verdict.INVALID;
            }
            if (instance.isBoolean()) {
                return bool ? Verdict.VALID : Verdict.INVALID;
            }
            if (instance.isNull()) {
                return nul ? Verdict.VALID : Verdict.INVALID;
            }
            if (instance.isNumber()) {
                if (number || (integer && instance.isIntegralNumber())) {
                    return Verdict.VALID;
                }
                // a number with a fraction part of zero is an integer to the specification: not judged here
                return integer ? Verdict.UNSURE : Verdict.INVALID;
            }
            return Verdict.UNSURE;
        };
    }

    /** {@code enum} (and {@code const}) of strings, booleans and null, which equal only what is written alike. */
    private static Check oneOfValues(JsonNode values) {
        if (!values.isArray()) {
            throw new Unsupported("enum " + values);
        }
        Set<JsonNode> allowed = new HashSet<>();
        for (JsonNode v : values) {
            if (!(v.isTextual() || v.isBoolean() || v.isNull())) {
                throw new Unsupported("enum value " + v);
            }
            allowed.add(v);
        }
        return instance -> {
            if (instance.isTextual() || instance.isBoolean() || instance.isNull()) {
                return allowed.contains(instance) ? Verdict.VALID : Verdict.INVALID;
            }
            // numbers, arrays and objects never equal a string, boolean or null (but the full validator fails on a
            // number beyond a double's range, and that refusal is its own)
            if (instance.isNumber()) {
                return finite(instance) ? Verdict.INVALID : Verdict.UNSURE;
            }
            return instance.isContainerNode() ? Verdict.INVALID : Verdict.UNSURE;
        };
    }

    private static Check required(JsonNode value) {
        if (!value.isArray()) {
            throw new Unsupported("required " + value);
        }
        String[] names = new String[value.size()];
        for (int i = 0; i < names.length; i++) {
            names[i] = value.get(i).asText();
        }
        return instance -> {
            if (!instance.isObject()) {
                return Verdict.VALID;
            }
            for (String n : names) {
                if (!instance.has(n)) {
                    return Verdict.INVALID;
                }
            }
            return Verdict.VALID;
        };
    }

    private Check properties(JsonNode value) {
        if (!value.isObject()) {
            throw new Unsupported("properties " + value);
        }
        Map<String, Check> byName = new HashMap<>();
        compiling.add("");
        for (Map.Entry<String, JsonNode> f : value.properties()) {
            byName.put(f.getKey(), of(f.getValue(), false));
        }
        compiling.remove(compiling.size() - 1);
        return instance -> {
            if (!instance.isObject()) {
                return Verdict.VALID;
            }
            Verdict v = Verdict.VALID;
            Iterator<Map.Entry<String, JsonNode>> fields = instance.properties().iterator();
            while (fields.hasNext() && v != Verdict.INVALID) {
                Map.Entry<String, JsonNode> f = fields.next();
                Check c = byName.get(f.getKey());
                if (c != null) {
                    v = v.and(c.test(f.getValue()));
                }
            }
            return v;
        };
    }

    private static Check noOtherProperties(JsonNode schema, JsonNode value) {
        if (!value.isBoolean() || value.booleanValue() || schema.has("patternProperties")) {
            throw new Unsupported("additionalProperties " + value);
        }
        Set<String> named = new HashSet<>();
        JsonNode properties = schema.path("properties");
        properties.fieldNames().forEachRemaining(named::add);
        return instance -> {
            if (!instance.isObject()) {
                return Verdict.VALID;
            }
            Iterator<String> names = instance.fieldNames();
            while (names.hasNext()) {
                if (!named.contains(names.next())) {
                    return Verdict.INVALID;
                }
            }
            return Verdict.VALID;
        };
    }

    private Check items(JsonNode value) {
        compiling.add("");
        Check each = of(value, false);
        compiling.remove(compiling.size() - 1);
        return instance -> {
            if (!instance.isArray()) {
                return Verdict.VALID;
            }
            Verdict v = Verdict.VALID;
            for (int i = 0; i < instance.size() && v != Verdict.INVALID; i++) {
                v = v.and(each.test(instance.get(i)));
            }
            return v;
        };
    }

    /**
     * Integer bounds up to 2^53 in magnitude, compared with numbers of at most that magnitude: there a double's exact
     * value, its shortest decimal form and (for whole numbers) its value as a long all fall on the same side of the
     * bound, whichever of them the full validator compares. Other numbers are not judged.
     */
    private static Check bound(JsonNode value, boolean lower) {
        if (!value.isIntegralNumber() || !value.canConvertToLong() || Math.abs((double) value.longValue()) > EXACT) {
            throw new Unsupported("bound " + value);
        }
        long limit = value.longValue();
        return instance -> {
            if (!instance.isNumber()) {
                return Verdict.VALID;
            }
            if (!finite(instance) || Math.abs(instance.doubleValue()) > EXACT) {
                return Verdict.UNSURE;
            }
            BigDecimal exact;
            if (instance.isBigDecimal()) {
                exact = instance.decimalValue();
            } else if (instance.isIntegralNumber()) {
                exact = BigDecimal.valueOf(instance.longValue());
            } else {
                exact = new BigDecimal(instance.doubleValue());
            }
            int c = exact.compareTo(BigDecimal.valueOf(limit));
            return (lower ? c >= 0 : c <= 0) ? Verdict.VALID : Verdict.INVALID;
        };
    }

    /** Whether a number node holds a finite value (a double beyond its range holds an infinity). */
    private static boolean finite(JsonNode number) {
        return !number.isFloatingPointNumber() || number.isBigDecimal() || Double.isFinite(number.doubleValue());
    }

    /** Lengths count code points, which a string has at most as many of as UTF-16 units. */
    private static Check length(JsonNode value, boolean min) {
        if (!value.canConvertToInt() || !value.isIntegralNumber() || value.intValue() < 0) {
            throw new Unsupported("length " + value);
        }
        int limit = value.intValue();
        return instance -> {
            if (!instance.isTextual()) {
                return Verdict.VALID;
            }
            String s = instance.textValue();
            if (min) {
                return s.length() >= limit && s.codePointCount(0, s.length()) >= limit ? Verdict.VALID : Verdict.UNSURE;
            }
            return s.length() <= limit ? Verdict.VALID : Verdict.UNSURE;
        };
    }

    private static Check format(JsonNode value) {
        if (!value.isTextual() || !value.textValue().equals("date-time")) {
            throw new Unsupported("format " + value);
        }
        return instance ->
                !instance.isTextual() || plainDateTime(instance.textValue()) ? Verdict.VALID : Verdict.UNSURE;
    }

    /**
     * Whether {@code s} is an RFC 3339 date-time in its plainest form, the one Java writes an instant in ({@code
     * yyyy-MM-ddTHH:mm:ss[.fffffffff]Z}: upper-case separators, seconds, up to nine fraction digits, UTC), on a day its
     * month has; any other form is left to the full validator.
     */
    static boolean plainDateTime(String s) {
        int n = s.length();
        // yyyy-MM-ddTHH:mm:ssZ, or with a fraction of one to nine digits before the Z
        if (n < 20 || n == 21 || n > 30 || s.charAt(n - 1) != 'Z') {
            return false;
        }
        if (s.charAt(4) != '-'
                || s.charAt(7) != '-'
                || s.charAt(10) != 'T'
                || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return false;
        }
        if (n > 20 && s.charAt(19) != '.') {
            return false;
        }
        for (int i = 20; i < n - 1; i++) {
            if (digit(s, i) < 0) {
                return false;
            }
        }
        int year = number(s, 0, 4);
        int month = number(s, 5, 2);
        int day = number(s, 8, 2);
        int hour = number(s, 11, 2);
        int minute = number(s, 14, 2);
        int second = number(s, 17, 2);
        if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) {
            return false;
        }
        return minute >= 0
                && minute <= 59
                && second >= 0
                && second <= 59
                && day <= YearMonth.of(year, month).lengthOfMonth();
    }

    /** The decimal number of {@code length} ASCII digits at {@code from}, or -1. */
    private static int number(String s, int from, int length) {
        int v = 0;
        for (int i = from; i < from + length; i++) {
            int d = digit(s, i);
            if (d < 0) {
                return -1;
            }
            v = v * 10 + d;
        }
        return v;
    }

    private static int digit(String s, int i) {
        char c = s.charAt(i);
        return c >= '0' && c <= '9' ? c - '0' : -1;
    }

    private Check allOf(JsonNode value) {
        if (!value.isArray() || value.isEmpty()) {
            throw new Unsupported("allOf " + value);
        }
        Check[] parts = new Check[value.size()];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = of(value.get(i), false);
        }
        return instance -> all(parts, instance);
    }

    private Check conditional(JsonNode schema) {
        Check condition = of(schema.get("if"), false);
        Check then = schema.has("then") ? of(schema.get("then"), false) : instance -> Verdict.VALID;
        Check otherwise = schema.has("else") ? of(schema.get("else"), false) : instance -> Verdict.VALID;
        return instance -> switch (condition.test(instance)) {
            case VALID -> then.test(instance);
            case INVALID -> otherwise.test(instance);
            case UNSURE -> Verdict.UNSURE;
        };
    }

    private Check reference(JsonNode value) {
        String ref = value.asText();
        if (!ref.startsWith("#/$defs/")
                || ref.indexOf('/', "#/$defs/".length()) >= 0
                || ref.contains("~")
                || ref.contains("%")
                || ref.length() == "#/$defs/".length()) {
            throw new Unsupported("$ref " + ref);
        }
        String name = ref.substring("#/$defs/".length());
        JsonNode target = root.path("$defs").get(name);
        if (target == null) {
            throw new Unsupported("$ref " + ref);
        }
        Check[] slot = definitions.get(name);
        if (slot == null) {
            slot = new Check[1];
            definitions.put(name, slot);
            compiling.add(name);
            slot[0] = of(target, false);
            compiling.remove(compiling.size() - 1);
        } else if (slot[0] == null
                && compiling
                        .subList(compiling.lastIndexOf("") + 1, compiling.size())
                        .contains(name)) {
            // a definition that refers to itself before a value's parts would recurse without end
            throw new Unsupported("$ref cycle " + ref);
        }
        Check[] compiled = slot;
        return instance -> compiled[0].test(instance);
    }
}
