package dev.engram.service.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.engram.query.QueryService;
import dev.engram.query.Responses;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.DocumentStatus;
import dev.engram.service.app.Consistency;
import dev.engram.service.app.DocumentWriter;
import dev.engram.service.app.Health;
import dev.engram.service.cluster.NamespaceDirectory;
import dev.engram.service.http.ApiKeys.Role;
import dev.engram.service.http.HttpApi.Reply;
import dev.engram.service.http.HttpApi.Request;
import dev.engram.service.http.HttpApi.Route;
import dev.engram.service.mcp.McpEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

/** The route table of the HTTP API (docs/http-api.md, and openapi.json beside this class): one handler per endpoint. */
public final class Routes {

    private static final String NS = "/v1/namespaces/{ns}";
    private static final Pattern NAMESPACE_LABEL = Pattern.compile("[{,]namespace=\"([^\"]*)\"");
    private static final int MAX_NAME_CHARS = 512;
    private static final int MAX_ID_CHARS = 512;
    /** The OpenAPI 3.1 description of this table, checked against it by the tests. */
    static final String OPENAPI = openapi();

    private final QueryService queries;
    private final Supplier<Health> health;
    private final Supplier<String> metrics;

    private final Consistency consistency;

    private final DocumentWriter documents;
    private final int maxDocumentBytes;
    private final NamespaceDirectory directory;

    public Routes(QueryService queries, Supplier<Health> health, Supplier<String> metrics, Consistency consistency) {
        this(queries, health, metrics, consistency, null, HttpApi.MAX_BODY_BYTES, null);
    }

    /**
     * With {@code documents}, the document routes write documents of up to {@code maxDocumentBytes}; with {@code
     * directory}, {@code GET /v1/namespaces} lists the cluster's namespaces. {@code POST /mcp} is answered by the MCP
     * transport the HTTP server mounts there ({@link McpEndpoint}), else 501.
     */
    public Routes(
            QueryService queries,
            Supplier<Health> health,
            Supplier<String> metrics,
            Consistency consistency,
            DocumentWriter documents,
            int maxDocumentBytes,
            NamespaceDirectory directory) {
        this.documents = documents;
        this.directory = directory;
        // the event wraps the body: room for its namespace, id and op, and for JSON escapes the event re-encodes
        this.maxDocumentBytes = (int) Math.min(Integer.MAX_VALUE - 8L, 2L * maxDocumentBytes + 4096);
        this.consistency = consistency;
        this.queries = queries;
        this.health = health;
        this.metrics = metrics;
    }

    /** The routes of health checks and metrics, which a listener of their own may also serve. */
    static final Set<String> MANAGEMENT = Set.of("/v1/health", "/v1/health/live", "/v1/health/ready", "/metrics");

    /** Health checks and metrics alone: the table of the management listener ({@code ENGRAM_HTTP_MANAGEMENT_PORT}). */
    public List<Route> management() {
        return table().stream().filter(r -> MANAGEMENT.contains(r.template())).toList();
    }

    /** Every endpoint of the API. */
    public List<Route> table() {
        return List.of(
                global("GET", "/", null, r -> Explorer.page()),
                global(
                        "GET",
                        "/explorer/{file}",
                        null,
                        r -> Explorer.asset(r.path().get("file"))),
                global("GET", "/openapi.json", null, r -> Reply.text("application/json", OPENAPI)),
                global("GET", "/metrics", Role.READ, this::metrics),
                // each tool call takes a slot of its namespace, in process (MemoryAccess#call), as that namespace's
                // requests do: the MCP request itself takes none, so that its tenant's share is what bounds it
                new Route("POST", "/mcp", Role.READ, false, null, Routes::noMcp, maxDocumentBytes, false),
                global("GET", "/v1/health", null, r -> {
                    Health h = health.get();
                    return Reply.json(h.serving() ? 200 : 503, h);
                }),
                global("GET", "/v1/health/live", null, r -> {
                    Health h = health.get();
                    return Reply.json(h.live() ? 200 : 503, h);
                }),
                global("GET", "/v1/health/ready", null, r -> {
                    Health h = health.get();
                    return Reply.json(h.ready() ? 200 : 503, h);
                }),
                global("GET", "/v1/namespaces", Role.READ, this::namespaceList),
                namespaced("GET", NS, r -> Reply.ok(queries.namespace(r.namespace()))),
                namespaced("POST", NS + "/retrieve", this::retrieve),
                new Route("POST", NS + "/answer", Role.READ, true, this::requireAnswering, this::answer),
                namespaced("GET", NS + "/documents", this::documents),
                new Route("PUT", NS + "/documents/{id}", Role.WRITE, true, null, this::put, maxDocumentBytes, true),
                new Route("DELETE", NS + "/documents/{id}", Role.WRITE, true, null, this::delete),
                namespaced("GET", NS + "/documents/{id}", r -> Reply.ok(queries.document(r.namespace(), id(r)))),
                namespaced("GET", NS + "/documents/{id}/gist", r -> Reply.ok(queries.gist(r.namespace(), id(r)))),
                namespaced("GET", NS + "/entities", this::entitiesByName),
                namespaced("GET", NS + "/entities/{id}", this::entity),
                namespaced("GET", NS + "/relations", this::relationTypes),
                namespaced("GET", NS + "/reviews", r -> Reply.ok(queries.reviews(r.namespace(), limit(r)))),
                namespaced("GET", NS + "/merges", r -> Reply.ok(queries.merges(r.namespace(), limit(r)))),
                new Route("POST", NS + "/merges", Role.ADMIN, true, null, this::command),
                namespaced("GET", NS + "/themes", r -> Reply.ok(queries.themes(r.namespace()))),
                namespaced("GET", NS + "/consistency", this::consistency),
                new Route(
                        "POST",
                        NS + "/consistency/repair",
                        Role.ADMIN,
                        true,
                        null,
                        r -> Reply.json(202, consistency.repair(r.namespace()))));
    }

    private static Route global(String method, String template, Role role, HttpApi.Handler handler) {
        return new Route(method, template, role, false, null, handler);
    }

    /** A route under a namespace that a key with read access to the namespace may use. */
    private static Route namespaced(String method, String template, HttpApi.Handler handler) {
        return new Route(method, template, Role.READ, true, null, handler);
    }

    /**
     * The Prometheus text, whole for a key of every namespace; for a tenant's key only the series labelled with its
     * namespaces, so no tenant learns another's namespaces or their activity.
     */
    private Reply metrics(Request r) {
        String text = metrics.get();
        ApiKeys.Key caller = r.caller();
        if (caller != null && !caller.allNamespaces()) {
            StringBuilder kept = new StringBuilder(text.length());
            for (String line : text.split("\n", -1)) {
                Matcher m = NAMESPACE_LABEL.matcher(line);
                // only the series of the key's namespaces: totals over the instance would show others' activity
                if (m.find() && caller.allows(m.group(1))) {
                    kept.append(line).append('\n');
                }
            }
            text = kept.toString();
        }
        return Reply.text("text/plain; version=0.0.4; charset=utf-8", text);
    }

    /** {@code ?scope=local}: this instance's own (how instances ask each other); else the cluster's. */
    private Reply namespaceList(Request r) {
        if (directory == null) {
            throw new ApiException(501, "not_configured", "this instance does not list namespaces");
        }
        String scope = r.query("scope");
        if (scope != null && !scope.equals(NamespaceDirectory.LOCAL_SCOPE)) {
            throw ApiException.badRequest("'scope' must be '" + NamespaceDirectory.LOCAL_SCOPE + "' when given");
        }
        NamespaceDirectory.Listing all = directory.list(scope != null, r.presentedKey());
        ApiKeys.Key caller = r.caller();
        if (caller == null || caller.allNamespaces()) {
            return Reply.ok(all);
        }
        return Reply.ok(new NamespaceDirectory.Listing(
                all.namespaces().stream().filter(caller::allows).toList(),
                all.instances(),
                all.incomplete(),
                List.of()));
    }

    /**
     * A bounded check (sampled beyond {@link Consistency#SAMPLE_OBJECTS} objects) for readers; {@code ?full=true}, a
     * comparison of every object, for administrators.
     */
    private Reply consistency(Request r) {
        String full = r.query("full");
        if (full != null && !full.equals("true") && !full.equals("false")) {
            throw ApiException.badRequest("'full' must be true or false");
        }
        Consistency.Scope scope = "true".equals(full) ? Consistency.Scope.FULL : Consistency.Scope.BOUNDED;
        ApiKeys.Key caller = r.caller();
        if (scope == Consistency.Scope.FULL && caller != null && !caller.role().includes(ApiKeys.Role.ADMIN)) {
            throw new ApiException(
                    403,
                    "forbidden",
                    "a full consistency check reads every object of the mirrors: it needs an admin key");
        }
        return Reply.ok(consistency.check(r.namespace(), scope));
    }

    private Reply retrieve(Request r) {
        Requests.Retrieve q = Requests.read(r.body(), Requests.Retrieve.class, Requests.Retrieve.EXAMPLE);
        return Reply.ok(queries.retrieve(r.namespace(), q.query(), q.mode(), q.topK(), q.params()));
    }

    /** Any instance can tell at once that it cannot answer: no LLM is configured. */
    private Reply requireAnswering(Request r) {
        queries.requireAnswering();
        return null;
    }

    private Reply answer(Request r) {
        Requests.Retrieve q = Requests.read(r.body(), Requests.Retrieve.class, Requests.Retrieve.EXAMPLE);
        return Reply.ok(queries.answer(r.namespace(), q.query(), q.mode(), q.topK(), q.params()));
    }

    private Reply documents(Request r) {
        String status = r.query("status");
        DocumentStatus wanted = null;
        if (status != null) {
            // the names as written, in lower case: no case mapping that reads "verıfıed" (a dotless ı) as VERIFIED
            for (DocumentStatus s : DocumentStatus.values()) {
                if (s.name().toLowerCase(Locale.ROOT).equals(status)) {
                    wanted = s;
                }
            }
            if (wanted == null) {
                throw ApiException.badRequest("'status' must be one of "
                        + Arrays.toString(DocumentStatus.values()).toLowerCase(Locale.ROOT));
            }
        }
        String cursor = r.query("cursor");
        String order = r.query("order");
        if (order != null && !order.equals("id") && !order.equals("recent")) {
            throw ApiException.badRequest("'order' must be 'id' or 'recent'");
        }
        if ("recent".equals(order)) {
            if (cursor != null) {
                throw ApiException.badRequest("'order=recent' is one page, newest first: it takes no 'cursor'");
            }
            return Reply.ok(queries.recentDocuments(r.namespace(), wanted, limit(r)));
        }
        String after = null;
        if (cursor != null) {
            try {
                after = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw ApiException.badRequest("'cursor' is not a cursor this API returned");
            }
            if (!validId(after)) {
                throw ApiException.badRequest("'cursor' is not a cursor this API returned");
            }
        }
        Responses.DocumentList page = queries.documents(r.namespace(), wanted, limit(r), after);
        return Reply.ok(new Responses.DocumentList(
                page.namespace(),
                page.status(),
                page.documents(),
                page.nextCursor() == null
                        ? null
                        : Base64.getUrlEncoder()
                                .withoutPadding()
                                .encodeToString(page.nextCursor().getBytes(StandardCharsets.UTF_8))));
    }

    private static Reply noMcp(Request r) {
        throw new ApiException(501, "not_configured", "this instance does not serve MCP");
    }

    private Reply put(Request r) {
        ObjectNode body = Requests.object(r.body(), Requests.Document.EXAMPLE);
        Requests.bind(body, Requests.Document.class, Requests.Document.EXAMPLE); // a 400 naming a wrong field
        DocumentWriter.Written w = writer().upsert(r.namespace(), newId(r), body, waitFor(r, "verified"));
        return Reply.json(Boolean.TRUE.equals(w.inMemory()) ? 200 : 202, w);
    }

    private Reply delete(Request r) {
        DocumentWriter.Written w = writer().delete(r.namespace(), id(r), waitFor(r, "archived"));
        return Reply.json(Boolean.TRUE.equals(w.inMemory()) ? 200 : 202, w);
    }

    private DocumentWriter writer() {
        if (documents == null) {
            throw new ApiException(501, "not_configured", "this instance cannot write documents");
        }
        return documents;
    }

    /** {@code ?wait=<state>&timeout_ms=}: how long to wait for memory to reach the state; null when not asked. */
    private static Duration waitFor(Request r, String state) {
        String wait = r.query("wait");
        String timeout = r.query("timeout_ms");
        if (wait == null) {
            if (timeout != null) {
                throw ApiException.badRequest("'timeout_ms' needs 'wait=" + state + "'");
            }
            return null;
        }
        if (!wait.equals(state)) {
            throw ApiException.badRequest("'wait' must be '" + state + "' here");
        }
        long max = DocumentWriter.MAX_WAIT.toMillis();
        long ms;
        try {
            ms = timeout == null ? 30_000 : Long.parseLong(digits(timeout));
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("'timeout_ms' must be an integer from 1 to " + max);
        }
        if (ms < 1 || ms > max) {
            throw ApiException.badRequest("'timeout_ms' must be an integer from 1 to " + max);
        }
        return Duration.ofMillis(ms);
    }

    private Reply entitiesByName(Request r) {
        String name = r.query("name");
        String like = r.query("like");
        if (like != null && name != null) {
            throw ApiException.badRequest("give 'name' or 'like', not both");
        }
        if (like != null) {
            if (!DocumentDecoder.visible(like) || like.codePointCount(0, like.length()) > MAX_NAME_CHARS) {
                throw ApiException.badRequest(
                        "'like' must be 1 to " + MAX_NAME_CHARS + " characters, with a visible one");
            }
            String limit = r.query("limit");
            return Reply.ok(
                    queries.entitiesLike(r.namespace(), like, limit == null ? 10 : bounded(limit, "limit", 100)));
        }
        if (name == null || name.isBlank()) {
            throw ApiException.badRequest("query parameter 'name' (or 'like') is required");
        }
        if (!DocumentDecoder.visible(name)) {
            throw ApiException.badRequest("'name' must have a visible character");
        }
        if (name.codePointCount(0, name.length()) > MAX_NAME_CHARS) {
            throw ApiException.badRequest("'name' is longer than " + MAX_NAME_CHARS + " characters");
        }
        return Reply.ok(queries.entities(r.namespace(), name));
    }

    private Reply command(Request r) {
        Requests.Command c = Requests.read(r.body(), Requests.Command.class, Requests.Command.EXAMPLE);
        return Reply.json(202, queries.command(r.namespace(), c.operation(), c.entityId(), c.otherId(), c.reason()));
    }

    /**
     * A document id: 1-512 characters (code points) without C0 control characters or DEL, as the event schema says;
     * ids written before the rules of new ids ({@link DocumentDecoder#newId}) are still read, listed and deleted.
     */
    private static String id(Request r) {
        String id = r.path().get("id");
        if (!validId(id)) {
            throw ApiException.badRequest("document id must be 1-512 characters without control characters");
        }
        return id;
    }

    public static boolean validId(String id) {
        return !id.isEmpty()
                && id.codePointCount(0, id.length()) <= MAX_ID_CHARS
                && id.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
    }

    /** The id of a document to write: a valid id that also meets the rules of new ids. */
    private static String newId(Request r) {
        String id = id(r);
        if (!DocumentDecoder.newId(id)) {
            throw ApiException.badRequest(
                    "a new document's id has no C1 control character (U+0080-U+009F), a visible character, and is not"
                            + " '.' or '..'");
        }
        return id;
    }

    /** An entity with one page of its passages: {@code ?limit=} (1–1000, 100) after {@code ?after=} a passage id. */
    private Reply entity(Request r) {
        String after = r.query("after");
        if (after != null
                && (after.isEmpty() || after.length() > 512 || after.chars().anyMatch(c -> c < 0x20 || c == 0x7f))) {
            throw ApiException.badRequest("'after' must be a passage id: 1 to 512 characters, none of them a control");
        }
        return Reply.ok(queries.entity(r.namespace(), entityId(r), after, limit(r)));
    }

    private static String entityId(Request r) {
        String id = r.path().get("id");
        if (!Requests.ENTITY_ID.matcher(id).matches()) {
            throw ApiException.badRequest("entity id must be 32 lowercase hex digits");
        }
        return id;
    }

    private Reply relationTypes(Request r) {
        String after = r.query("established_after");
        return Reply.ok(queries.relationTypes(
                r.namespace(), limit(r), after == null ? 3 : bounded(after, "established_after", 1000)));
    }

    /** An integer query parameter from 1 to {@code max}. */
    private static int bounded(String value, String name, int max) {
        int n;
        try {
            n = Integer.parseInt(digits(value));
        } catch (NumberFormatException e) {
            n = 0;
        }
        if (n < 1 || n > max) {
            throw ApiException.badRequest("'" + name + "' must be an integer from 1 to " + max);
        }
        return n;
    }

    /**
     * A count as written in a query: ASCII digits only. {@code Integer.parseInt} alone would also take a sign and the
     * digits of other scripts ("٣", "２"), so that different requests would mean the same.
     */
    static String digits(String value) {
        if (value.isEmpty() || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new NumberFormatException("not ASCII digits: " + value);
        }
        return value;
    }

    /** The {@code limit} query parameter: 1 to 1000, 100 when absent. */
    private static int limit(Request r) {
        String limit = r.query("limit");
        return limit == null ? 100 : bounded(limit, "limit", 1000);
    }

    private static String openapi() {
        try (InputStream in = Routes.class.getResourceAsStream("openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
