package dev.engram.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.query.QueryException;
import dev.engram.query.QueryService;
import dev.engram.query.Responses;
import dev.engram.schemas.Json;
import dev.engram.understanding.agent.MemoryView;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The construction agent's view of a namespace's memory: read from this instance's stores when it owns the namespace,
 * and otherwise asked of the owner over its HTTP API (with {@code ENGRAM_AGENT_API_KEY} when API keys are on). A
 * namespace with no memory yet reads as empty. While memory cannot be read — the service starting or rebalancing, the
 * owner not answering — every read throws {@link MemoryView.Unavailable}, and the agent tries the passage again later.
 */
final class AgentMemory implements MemoryView {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private record Bound(QueryService queries, NamespaceRouter router, HttpClient http, String apiKey) {}

    private volatile Bound bound;

    void bind(QueryService queries, NamespaceRouter router, String apiKey) {
        this.bound = new Bound(
                queries, router, HttpClient.newBuilder().connectTimeout(TIMEOUT).build(), apiKey);
    }

    @Override
    public void ensureReadable(String ns) {
        Bound b = bound();
        try {
            if (b.router().ownerOf(ns) instanceof NamespaceRouter.Local) {
                b.queries().namespaceState(ns); // the stores of its partition answer
            }
        } catch (QueryException e) {
            if (e.kind() == QueryException.Kind.UNAVAILABLE) {
                throw new Unavailable(e.getMessage(), e);
            }
        } catch (ApiException e) {
            if (e.status() == 503) {
                throw new Unavailable(e.getMessage(), e);
            }
            throw e;
        }
    }

    @Override
    public List<KnownEntity> entitiesNamed(String ns, String name, int limit) {
        return read(ns, q -> q.entities(ns, name).entities(), "/entities?name=" + encode(name), limit);
    }

    @Override
    public List<KnownEntity> entitiesLike(String ns, String text, int limit) {
        return read(
                ns,
                q -> q.entitiesLike(ns, text, limit).entities(),
                "/entities?like=" + encode(text) + "&limit=" + limit,
                limit);
    }

    @Override
    public List<KnownPassage> related(String ns, String query, int limit) {
        Bound b = bound();
        List<KnownPassage> out = new ArrayList<>();
        try {
            if (b.router().ownerOf(ns) instanceof NamespaceRouter.Remote remote) {
                ObjectNode body = Json.mapper().createObjectNode();
                body.put("query", query).put("mode", "fusion").put("top_k", limit);
                for (JsonNode p :
                        remote(b, remote.host(), ns, "/retrieve", body).path("results")) {
                    out.add(new KnownPassage(
                            p.path("passage_id").asText(),
                            p.path("document_id").asText(),
                            p.path("memory").asText()));
                }
            } else {
                for (Responses.Passage p : b.queries()
                        .retrieve(ns, query, "fusion", limit, Map.of())
                        .results()) {
                    out.add(new KnownPassage(p.passageId(), p.documentId(), p.memory()));
                }
            }
        } catch (QueryException e) {
            if (e.kind() == QueryException.Kind.UNAVAILABLE) {
                throw new Unavailable(e.getMessage(), e);
            }
            if (e.kind() != QueryException.Kind.NOT_FOUND) {
                throw e;
            }
        } catch (ApiException e) {
            if (e.status() == 503) {
                throw new Unavailable(e.getMessage(), e);
            }
            throw e;
        }
        return out;
    }

    @Override
    public List<RelationType> relationTypes(String ns, int limit) {
        Bound b = bound();
        List<RelationType> out = new ArrayList<>();
        try {
            if (b.router().ownerOf(ns) instanceof NamespaceRouter.Remote remote) {
                for (JsonNode t : remote(b, remote.host(), ns, "/relations?limit=" + limit, null)
                        .path("relations")) {
                    out.add(new RelationType(
                            t.path("relation").asText(),
                            t.path("passages").asInt(),
                            t.path("status").asText()));
                }
            } else {
                for (Responses.RelationType t :
                        b.queries().relationTypes(ns, limit, 3).relations()) {
                    out.add(new RelationType(t.relation(), t.passages(), t.status()));
                }
            }
        } catch (QueryException e) {
            if (e.kind() == QueryException.Kind.UNAVAILABLE) {
                throw new Unavailable(e.getMessage(), e);
            }
            if (e.kind() != QueryException.Kind.NOT_FOUND) {
                throw e;
            }
        } catch (ApiException e) {
            if (e.status() == 503) {
                throw new Unavailable(e.getMessage(), e);
            }
            throw e;
        }
        return out;
    }

    private List<KnownEntity> read(
            String ns, Function<QueryService, List<Responses.Entity>> local, String path, int limit) {
        Bound b = bound();
        List<KnownEntity> out = new ArrayList<>();
        try {
            if (b.router().ownerOf(ns) instanceof NamespaceRouter.Remote remote) {
                for (JsonNode e : remote(b, remote.host(), ns, path, null).path("entities")) {
                    List<String> aliases = new ArrayList<>();
                    e.path("aliases").forEach(a -> aliases.add(a.asText()));
                    out.add(new KnownEntity(
                            e.path("id").asText(),
                            e.path("name").asText(),
                            e.path("type").asText("other").toLowerCase(Locale.ROOT),
                            e.path("description").asText(""),
                            aliases));
                }
            } else {
                for (Responses.Entity e : local.apply(b.queries())) {
                    out.add(new KnownEntity(
                            e.id(), e.name(), e.type().name().toLowerCase(Locale.ROOT), e.description(), e.aliases()));
                }
            }
        } catch (QueryException e) {
            if (e.kind() == QueryException.Kind.UNAVAILABLE) {
                throw new Unavailable(e.getMessage(), e);
            }
            if (e.kind() != QueryException.Kind.NOT_FOUND) {
                throw e;
            }
        } catch (ApiException e) {
            if (e.status() == 503) {
                throw new Unavailable(e.getMessage(), e);
            }
            throw e;
        }
        return out.size() <= limit ? out : out.subList(0, limit);
    }

    /** A GET (or, with a body, POST) to the owner of the namespace; a 404 is a namespace without memory. */
    private static JsonNode remote(Bound b, HostInfo host, String ns, String path, JsonNode body) {
        URI uri = URI.create("http://" + host.host() + ":" + host.port() + "/v1/namespaces/" + encode(ns) + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(TIMEOUT);
        if (body != null) {
            request.header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body)));
        }
        if (!b.apiKey().isEmpty()) {
            request.header("Authorization", "Bearer " + b.apiKey());
        }
        HttpResponse<byte[]> response;
        try {
            response = b.http().send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new Unavailable("the owner of namespace '" + ns + "' did not answer: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading namespace '" + ns + "'", e);
        }
        if (response.statusCode() == 503) {
            throw new Unavailable("the owner of namespace '" + ns + "' cannot answer yet", null);
        }
        if (response.statusCode() == 404) {
            throw QueryException.notFound("namespace '" + ns + "' has no memory yet");
        }
        if (response.statusCode() != 200) {
            throw new IllegalStateException("the owner of namespace '" + ns + "' answered " + response.statusCode()
                    + (response.statusCode() == 401 || response.statusCode() == 403
                            ? " (set ENGRAM_AGENT_API_KEY to a key that may read it)"
                            : ""));
        }
        try {
            return Json.mapper().readTree(response.body());
        } catch (IOException e) {
            throw new IllegalStateException("the owner of namespace '" + ns + "' answered invalid JSON", e);
        }
    }

    private Bound bound() {
        Bound b = bound;
        if (b == null) {
            throw new Unavailable("memory is not readable yet: the service is starting", null);
        }
        return b;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
