package dev.engram.service;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which web pages may make a browser send requests that change memory or call tools (every method but {@code GET},
 * {@code HEAD} and {@code OPTIONS}). A browser names the page's origin in an {@code Origin} header; other clients
 * (curl, SDKs, other instances) send none and are not concerned.
 *
 * <p>Allowed: pages served from this machine (a loopback host: {@code localhost}, {@code 127.0.0.1}, {@code [::1]}),
 * from the host this instance advertises, and the origins configured ({@code ENGRAM_HTTP_ALLOWED_ORIGINS}, or
 * {@code *} for any). With API keys required, a page of the origin the request is sent to (the explorer, opened at any
 * name) is allowed too: another site's page cannot present a key. Without keys that rule is left out, since a page of
 * an attacker's domain that resolves to this instance (DNS rebinding) is then of the same origin as the request.
 * Everything else is refused, which stops a page of another site from writing to a key-less instance (cross-site
 * request forgery).
 */
final class Origins {

    private final Set<String> allowed;
    private final String advertisedHost;
    private final boolean any;

    Origins(String advertisedHost, List<String> allowed) {
        this.advertisedHost = advertisedHost == null ? "" : advertisedHost.toLowerCase(Locale.ROOT);
        this.any = allowed.contains("*");
        this.allowed = allowed.stream()
                .filter(o -> !o.equals("*"))
                .map(o -> normalize(o.strip()))
                .collect(Collectors.toUnmodifiableSet());
    }

    /** Only pages served from this machine and from the advertised host. */
    static Origins local(String advertisedHost) {
        return new Origins(advertisedHost, List.of());
    }

    /** Whether a request that carries {@code Origin: origin} and {@code Host: host} may go on. */
    boolean allows(String origin, String host, boolean keysRequired) {
        if (origin == null || any) {
            return true;
        }
        URI uri;
        try {
            uri = new URI(origin.strip());
        } catch (URISyntaxException e) {
            return false; // "null" (a sandboxed page, a file) and anything unparseable
        }
        if (uri.getScheme() == null || uri.getHost() == null) {
            return false;
        }
        String h = uri.getHost().toLowerCase(Locale.ROOT);
        if (loopback(h) || h.equals(advertisedHost) || allowed.contains(normalize(origin.strip()))) {
            return true;
        }
        return keysRequired && host != null && hostPort(uri).equalsIgnoreCase(host.strip());
    }

    private static boolean loopback(String host) {
        return host.equals("localhost")
                || host.endsWith(".localhost")
                || host.equals("[::1]")
                || host.equals("::1")
                || host.matches("127(\\.\\d{1,3}){3}");
    }

    /** {@code host[:port]} as a Host header names it, the port left out where it is the scheme's default. */
    private static String hostPort(URI uri) {
        int port = uri.getPort();
        boolean defaultPort = port < 0
                || (port == 80 && "http".equalsIgnoreCase(uri.getScheme()))
                || (port == 443 && "https".equalsIgnoreCase(uri.getScheme()));
        return defaultPort ? uri.getHost() : uri.getHost() + ":" + port;
    }

    private static String normalize(String origin) {
        String o = origin.toLowerCase(Locale.ROOT);
        return o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
    }
}
