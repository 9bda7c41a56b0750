package dev.engram.stores;

/**
 * Composite store keys: parts joined by NUL, so that all keys of a namespace (or of an entity) share a prefix that
 * {@code prefixScan} can find, and no part can run into the next.
 */
public final class Keys {

    public static final char SEPARATOR = '\u0000';

    private Keys() {}

    public static String of(String... parts) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (parts[i].indexOf(SEPARATOR) >= 0) {
                throw new IllegalArgumentException("key part contains NUL");
            }
            if (i > 0) {
                sb.append(SEPARATOR);
            }
            sb.append(parts[i]);
        }
        return sb.toString();
    }

    /** The prefix of every key that starts with these parts. */
    public static String prefix(String... parts) {
        return of(parts) + SEPARATOR;
    }

    /** The last part of a composite key. */
    public static String last(String key) {
        return key.substring(key.lastIndexOf(SEPARATOR) + 1);
    }
}
