package dev.engram.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The API keys of an instance, each bound to namespaces with a role. Keys are kept as SHA-256 digests and a presented
 * key is compared with every one of them in constant time, so neither a key nor how much of it matched leaks
 * through timing.
 */
public final class ApiKeys {

    /** What a key may do; each role includes the ones before it. */
    public enum Role {
        /** Query: retrieve, answer, read documents, entities, reviews, themes, stats. */
        READ,
        /** Also change memory: documents. */
        WRITE,
        /** Also operate: entity merge commands, every namespace's metrics. */
        ADMIN;

        public boolean includes(Role other) {
            return compareTo(other) >= 0;
        }

        static Role parse(String s) {
            try {
                return valueOf(s.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                // never echo the text: a key written in the wrong order would be printed
                throw new IllegalArgumentException("the role must be read, write or admin");
            }
        }
    }

    /** One key: a name for logs, its digest, its role and its namespaces ({@code *}: all of them). */
    public record Key(String name, byte[] sha256, Role role, Set<String> namespaces) {

        public Key {
            namespaces = Set.copyOf(namespaces);
        }

        public boolean allows(String namespace) {
            return namespaces.contains("*") || namespaces.contains(namespace);
        }

        public boolean allNamespaces() {
            return namespaces.contains("*");
        }

        @Override
        public String toString() {
            return "Key[name=" + name + ", role=" + role + ", namespaces=" + new TreeSet<>(namespaces) + "]";
        }
    }

    private final List<Key> keys;

    public ApiKeys(List<Key> keys) {
        this.keys = List.copyOf(keys);
    }

    List<Key> keys() {
        return keys;
    }

    /** The key a presented secret is, if any; every configured key is compared, whatever matches first. */
    public Optional<Key> authenticate(String presented) {
        if (presented == null || presented.isEmpty()) {
            return Optional.empty();
        }
        byte[] digest = sha256(presented);
        Key found = null;
        for (Key k : keys) {
            if (MessageDigest.isEqual(k.sha256(), digest) && found == null) {
                found = k;
            }
        }
        return Optional.ofNullable(found);
    }

    /**
     * Keys written inline, separated by {@code ;}: {@code role:namespaces:secret}, namespaces separated by {@code ,}
     * or {@code *}, e.g. {@code admin:*:s3cret;read:notes,wiki:an0ther}.
     */
    public static List<Key> parseInline(String spec) {
        List<Key> out = new ArrayList<>();
        int n = 0;
        for (String entry : spec.split(";")) {
            if (entry.isBlank()) {
                continue;
            }
            n++;
            String[] parts = entry.strip().split(":", 3);
            if (parts.length != 3 || parts[2].isEmpty()) {
                throw new IllegalArgumentException("key " + n + " must be role:namespaces:secret");
            }
            out.add(new Key("key-" + n, sha256(parts[2]), Role.parse(parts[0]), namespaces(parts[1], "key " + n)));
        }
        return out;
    }

    /**
     * Keys from a JSON file: {@code [{"name": "ci", "role": "read", "namespaces": ["wiki"], "sha256": "…"}]}, the
     * digest in hex of the secret (or {@code "key"} with the secret itself, for development).
     */
    public static List<Key> parseFile(Path file) {
        JsonNode root;
        try {
            root = Json.mapper().readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
        }
        if (root == null || !root.isArray()) {
            throw new IllegalArgumentException(file + " must hold a JSON array of keys");
        }
        List<Key> out = new ArrayList<>();
        for (int i = 0; i < root.size(); i++) {
            JsonNode k = root.get(i);
            String where = "key " + (i + 1) + " of " + file;
            String name = k.path("name").asText("key-" + (i + 1));
            byte[] digest;
            if (k.path("sha256").isTextual()) {
                try {
                    digest = HexFormat.of().parseHex(k.path("sha256").asText());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(where + ": 'sha256' is not hex");
                }
                if (digest.length != 32) {
                    throw new IllegalArgumentException(where + ": 'sha256' must be 64 hex digits");
                }
            } else if (k.path("key").isTextual() && !k.path("key").asText().isEmpty()) {
                digest = sha256(k.path("key").asText());
            } else {
                throw new IllegalArgumentException(where + " needs 'sha256' (or 'key')");
            }
            if (!k.path("role").isTextual()) {
                throw new IllegalArgumentException(where + " needs a 'role'");
            }
            List<String> namespaces = new ArrayList<>();
            k.path("namespaces").forEach(ns -> namespaces.add(ns.asText()));
            out.add(new Key(
                    name,
                    digest,
                    Role.parse(k.path("role").asText()),
                    namespaces(String.join(",", namespaces), where)));
        }
        return out;
    }

    private static Set<String> namespaces(String list, String where) {
        Set<String> out = new TreeSet<>();
        for (String ns : list.split(",")) {
            if (!ns.isBlank()) {
                out.add(ns.strip());
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(where + " names no namespace (use * for all)");
        }
        return out;
    }

    public static byte[] sha256(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
