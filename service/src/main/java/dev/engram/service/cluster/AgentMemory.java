package dev.engram.service.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.query.QueryException;
import dev.engram.query.QueryService;
import dev.engram.query.Responses;
import dev.engram.schemas.Json;
import dev.engram.service.http.ApiException;
import dev.engram.understanding.agent.MemoryView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The construction agent's view of a namespace's memory: read from this instance's stores when it owns the namespace,
 * and otherwise asked of the owner over its HTTP API (with {@code ENGRAM_AGENT_API_KEY} when API keys are on). A
 * namespace with no memory yet reads as empty. While memory cannot be read — the service starting or rebalancing, the
 * owner not answering — every read throws {@link MemoryView.Unavailable}, and the agent tries the passage again later.
 */
public final class AgentMemory implements MemoryView {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private record Bound(QueryService queries, NamespaceRouter router, MemoryAccess memory, String apiKey) {}

    private volatile Bound bound;

    public void bind(QueryService queries, NamespaceRouter router, MemoryAccess memory, String apiKey) {
        this.bound = new Bound(queries, router, memory, apiKey);
    }

    @Override
    public void ensureReadable(String ns) {
        // only the owner's own stores are asked: another instance's are reached when read
        read(
                ns,
                q -> {
                    q.namespaceState(ns);
                    return List.of();
                },
                null);
    }

    @Override
    public List<KnownEntity> entitiesNamed(String ns, String name, int limit) {
        return entities(ns, q -> q.entities(ns, name).entities(), Map.of("name", List.of(name)), limit);
    }

    @Override
    public List<KnownEntity> entitiesLike(String ns, String text, int limit) {
        return entities(
                ns,
                q -> q.entitiesLike(ns, text, limit).entities(),
                Map.of("like", List.of(text), "limit", List.of(Integer.toString(limit))),
                limit);
    }

    @Override
    public List<KnownPassage> related(String ns, String query, int limit) {
        return read(
                ns,
                q -> q.retrieve(ns, query, "fusion", limit, Map.of()).results().stream()
                        .map(p -> new KnownPassage(p.passageId(), p.documentId(), p.memory()))
                        .toList(),
                owner -> {
                    ObjectNode body = Json.mapper().createObjectNode();
                    body.put("query", query).put("mode", "fusion").put("top_k", limit);
                    List<KnownPassage> out = new ArrayList<>();
                    for (JsonNode p :
                            remote(ns, "POST", "/retrieve", Map.of(), body).path("results")) {
                        out.add(new KnownPassage(
                                p.path("passage_id").asText(),
                                p.path("document_id").asText(),
                                p.path("memory").asText()));
                    }
                    return out;
                });
    }

    @Override
    public List<RelationType> relationTypes(String ns, int limit) {
        return read(
                ns,
                q -> q.relationTypes(ns, limit, 3).relations().stream()
                        .map(t -> new RelationType(t.relation(), t.passages(), t.status()))
                        .toList(),
                owner -> {
                    List<RelationType> out = new ArrayList<>();
                    for (JsonNode t : remote(
                                    ns, "GET", "/relations", Map.of("limit", List.of(Integer.toString(limit))), null)
                            .path("relations")) {
                        out.add(new RelationType(
                                t.path("relation").asText(),
                                t.path("passages").asInt(),
                                t.path("status").asText()));
                    }
                    return out;
                });
    }

    private List<KnownEntity> entities(
            String ns,
            Function<QueryService, List<Responses.Entity>> local,
            Map<String, List<String>> query,
            int limit) {
        List<KnownEntity> found = read(
                ns,
                q -> local.apply(q).stream()
                        .map(e -> new KnownEntity(
                                e.id(),
                                e.name(),
                                e.type().name().toLowerCase(Locale.ROOT),
                                e.description(),
                                e.aliases()))
                        .toList(),
                owner -> {
                    List<KnownEntity> out = new ArrayList<>();
                    for (JsonNode e :
                            remote(ns, "GET", "/entities", query, null).path("entities")) {
                        List<String> aliases = new ArrayList<>();
                        e.path("aliases").forEach(a -> aliases.add(a.asText()));
                        out.add(new KnownEntity(
                                e.path("id").asText(),
                                e.path("name").asText(),
                                e.path("type").asText("other").toLowerCase(Locale.ROOT),
                                e.path("description").asText(""),
                                aliases));
                    }
                    return out;
                });
        return found.size() <= limit ? found : found.subList(0, limit);
    }

    /**
     * Reads from this instance's stores when it owns the namespace, else from the owner ({@code remote}, or nothing
     * when null). A namespace without memory reads as empty; a namespace whose memory cannot be read now throws
     * {@link MemoryView.Unavailable}.
     */
    private <T> List<T> read(
            String ns, Function<QueryService, List<T>> local, Function<NamespaceRouter.Remote, List<T>> remote) {
        Bound b = bound();
        try {
            if (b.router().ownerOf(ns) instanceof NamespaceRouter.Remote owner) {
                return remote == null ? List.of() : remote.apply(owner);
            }
            return local.apply(b.queries());
        } catch (QueryException e) {
            if (e.kind() == QueryException.Kind.UNAVAILABLE) {
                throw new Unavailable(e.getMessage(), e);
            }
            if (e.kind() == QueryException.Kind.NOT_FOUND) {
                return List.of();
            }
            throw e;
        } catch (ApiException e) {
            if (e.status() == 503) {
                throw new Unavailable(e.getMessage(), e);
            }
            throw e;
        }
    }

    /**
     * A read of the owner's memory through {@link MemoryAccess} (the owner's API, with {@code ENGRAM_AGENT_API_KEY});
     * a 404 is a namespace without memory.
     */
    private JsonNode remote(String ns, String method, String route, Map<String, List<String>> query, JsonNode body) {
        Bound b = bound();
        MemoryAccess.Answer answer = b.memory()
                .call(
                        new MemoryAccess.Caller(null, b.apiKey().isEmpty() ? null : b.apiKey()),
                        method,
                        "/v1/namespaces/{ns}" + route,
                        Map.of("ns", ns),
                        query,
                        body == null ? new byte[0] : Json.toBytes(body),
                        TIMEOUT);
        if (answer.status() == 503) {
            throw new Unavailable("the owner of namespace '" + ns + "' cannot answer yet: " + answer.error(), null);
        }
        if (answer.status() == 404) {
            throw QueryException.notFound("namespace '" + ns + "' has no memory yet");
        }
        if (answer.status() != 200) {
            throw new IllegalStateException("the owner of namespace '" + ns + "' answered " + answer.error()
                    + (answer.status() == 401 || answer.status() == 403
                            ? " (set ENGRAM_AGENT_API_KEY to a key that may read it)"
                            : ""));
        }
        JsonNode tree = answer.json();
        if (tree.isMissingNode()) {
            throw new IllegalStateException("the owner of namespace '" + ns + "' answered invalid JSON");
        }
        return tree;
    }

    private Bound bound() {
        Bound b = bound;
        if (b == null) {
            throw new Unavailable("memory is not readable yet: the service is starting", null);
        }
        return b;
    }
}
