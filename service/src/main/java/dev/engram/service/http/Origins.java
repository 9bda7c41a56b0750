package dev.engram.service.http;

import com.google.re2j.Pattern;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which web pages may make a browser send requests that change memory or call tools (routes that need a {@code write}
 * or {@code admin} key, and MCP). A browser names the page's origin in an {@code Origin} header; other clients (curl,
 * SDKs, other instances) send none and are not concerned, and reading (including {@code POST /retrieve}) is never
 * concerned: a page of another site cannot read the answers without CORS, which this API does not grant.
 *
 * <p>Allowed: pages served from this machine (a loopback host: {@code localhost}, {@code 127.0.0.1}, {@code [::1]}),
 * from the host this instance advertises, and the origins configured ({@code ENGRAM_HTTP_ALLOWED_ORIGINS}, or
 * {@code *} for any). A page of the very origin the request is sent to (the explorer, opened at any name) is allowed
 * when API keys are required (another site's page cannot present a key; behind a proxy that rewrites {@code Host}, the
 * proxy's {@code X-Forwarded-Host} counts), and without keys when that origin's host is an IP address: with a name
 * instead, the page could be an attacker's domain that resolves to this instance (DNS rebinding), which is of the
 * same origin as the request. Everything else is refused, which stops a page of another site from writing to a
 * key-less instance (cross-site request forgery).
 *
 * <p>Reading is the concern of {@link #allowsHost}: a page of an attacker's domain that resolves to a key-less
 * instance (DNS rebinding) is of the same origin as its requests, so the browser lets it read the answers. Such a
 * request names the attacker's domain in its {@code Host} header; a key-less instance answers only requests that name
 * it by an IP address, a loopback name, its advertised host, the host of an allowed origin, or a name configured in
 * {@code ENGRAM_HTTP_ALLOWED_HOSTS}.
 */
public final class Origins {

    // Host headers are untrusted: these run in linear time (RE2/J) on any header
    private static final Pattern BRACKETED_IPV6 =
            Pattern.compile("\\[[0-9a-f:.]*:[0-9a-f:.]*(%[0-9a-z._-]+)?](:\\d{1,5})?");
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern LOOPBACK_IPV4 = Pattern.compile("127(\\.\\d{1,3}){3}");
    private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]{0,252})");

    private final Set<String> allowed;
    private final String advertisedHost;
    private final boolean any;
    /** Names (lower case) a key-less instance answers to beside IP addresses, loopback names and its advertised host. */
    private final Set<String> hostNames;

    private final boolean anyHost;

    public Origins(String advertisedHost, List<String> allowed) {
        this(advertisedHost, allowed, List.of());
    }

    public Origins(String advertisedHost, List<String> allowed, List<String> allowedHosts) {
        this.advertisedHost = advertisedHost == null ? "" : bare(advertisedHost);
        this.any = allowed.contains("*");
        this.allowed = allowed.stream()
                .filter(o -> !o.equals("*"))
                .map(o -> normalize(o.strip()))
                .collect(Collectors.toUnmodifiableSet());
        this.anyHost = allowedHosts.contains("*");
        Set<String> names = new HashSet<>();
        allowedHosts.stream().filter(h -> !h.equals("*")).map(Origins::bare).forEach(names::add);
        for (String origin : this.allowed) {
            try {
                String host = new URI(origin).getHost();
                if (host != null) {
                    names.add(host.toLowerCase(Locale.ROOT));
                }
            } catch (URISyntaxException e) {
                // not an origin: allows no page, and names no host
            }
        }
        this.hostNames = Set.copyOf(names);
    }

    /**
     * Whether a request that names this instance {@code host} (its {@code Host} header, null when absent) may be
     * answered by an instance without API keys.
     */
    boolean allowsHost(String host) {
        if (host == null || host.isBlank() || anyHost) {
            return true; // no name to be misled by (HTTP/1.0 clients send none)
        }
        String h = host.strip().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) { // an IPv6 address, and a port maybe
            return BRACKETED_IPV6.matcher(h).matches();
        }
        int colon = h.lastIndexOf(':');
        String name = bare(colon >= 0 ? h.substring(0, colon) : h);
        return ipLiteral(name) || loopback(name) || name.equals(advertisedHost) || hostNames.contains(name);
    }

    /** A host name in lower case, without the trailing dot of a fully qualified one ("localhost." is "localhost"). */
    private static String bare(String name) {
        String n = name.strip().toLowerCase(Locale.ROOT);
        return n.endsWith(".") ? n.substring(0, n.length() - 1) : n;
    }

    /** Checks a configured host name: letters, digits, dots and hyphens, or {@code *}. */
    public static String checkedHost(String host) {
        if (host.equals("*") || HOST_NAME.matcher(host).matches()) {
            return host;
        }
        throw new IllegalArgumentException("not a host name (like engram.example.com): '" + host + "'");
    }

    /** Only pages served from this machine and from the advertised host. */
    public static Origins local(String advertisedHost) {
        return new Origins(advertisedHost, List.of());
    }

    /** Whether a request that carries {@code Origin: origin} and {@code Host: host} may go on. */
    boolean allows(String origin, String host, boolean keysRequired) {
        return allows(origin, host, null, keysRequired);
    }

    /**
     * Whether a request that carries {@code Origin: origin}, {@code Host: host} and {@code X-Forwarded-Host:
     * forwardedHost} (null when absent) may go on.
     */
    boolean allows(String origin, String host, String forwardedHost, boolean keysRequired) {
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
        String own = hostPort(uri);
        if (keysRequired) {
            return (host != null && own.equalsIgnoreCase(host.strip()))
                    || (forwardedHost != null && own.equalsIgnoreCase(forwardedHost.split(",")[0].strip()));
        }
        return ipLiteral(h) && host != null && own.equalsIgnoreCase(host.strip());
    }

    private static boolean ipLiteral(String host) {
        return host.startsWith("[") || IPV4.matcher(host).matches();
    }

    /** Checks a configured origin: {@code scheme://host[:port]}, or {@code *}. */
    public static String checked(String origin) {
        if (origin.equals("*")) {
            return origin;
        }
        try {
            URI uri = new URI(origin);
            String scheme = uri.getScheme();
            if (scheme == null
                    || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
                    || uri.getHost() == null
                    || (uri.getRawPath() != null
                            && !uri.getRawPath().isEmpty()
                            && !uri.getRawPath().equals("/"))
                    || uri.getRawQuery() != null
                    || uri.getRawFragment() != null
                    || uri.getRawUserInfo() != null) {
                throw new IllegalArgumentException();
            }
            return origin;
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "not an origin (scheme://host[:port], like https://app.example.com): '" + origin + "'");
        }
    }

    private static boolean loopback(String host) {
        return host.equals("localhost")
                || host.endsWith(".localhost")
                || host.equals("[::1]")
                || host.equals("::1")
                || LOOPBACK_IPV4.matcher(host).matches();
    }

    /** {@code host[:port]} as a Host header names it, the port left out where it is the scheme's default. */
    private static String hostPort(URI uri) {
        int port = uri.getPort();
        boolean defaultPort = port < 0
                || (port == 80 && "http".equalsIgnoreCase(uri.getScheme()))
                || (port == 443 && "https".equalsIgnoreCase(uri.getScheme()));
        return defaultPort ? uri.getHost() : uri.getHost() + ":" + port;
    }

    /** {@code scheme://host[:port]} in lower case, the port left out where it is the scheme's default. */
    private static String normalize(String origin) {
        String o = origin.toLowerCase(Locale.ROOT);
        o = o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
        if (o.startsWith("http://") && o.endsWith(":80")) {
            return o.substring(0, o.length() - 3);
        }
        if (o.startsWith("https://") && o.endsWith(":443")) {
            return o.substring(0, o.length() - 4);
        }
        return o;
    }
}
