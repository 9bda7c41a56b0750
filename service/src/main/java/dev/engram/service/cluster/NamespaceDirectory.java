package dev.engram.service.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The namespaces of the whole cluster: this instance's own, and those every other instance of the memory step says it
 * holds, asked in parallel. An instance that does not answer in time, or is not serving its stores yet, makes the
 * listing {@code incomplete} instead of failing it.
 */
public final class NamespaceDirectory {

    /**
     * {@code GET /v1/namespaces}: sorted names; {@code incomplete} when an instance did not answer, and which ones
     * (only to a key of every namespace: a tenant learns nothing of the cluster's addresses).
     */
    public record Listing(List<String> namespaces, int instances, boolean incomplete, List<String> unreachable) {}

    public static final String LOCAL_SCOPE = "local";
    private static final Duration PEER_TIMEOUT = Duration.ofSeconds(5);

    private final Supplier<List<String>> local;
    private final Supplier<List<HostInfo>> instances;
    private final HostInfo self;
    private final HttpClient http;

    /**
     * @param local the namespaces this instance's memory holds; throws (503) while its stores cannot be read
     * @param instances every instance of the memory step, this one included
     */
    public NamespaceDirectory(Supplier<List<String>> local, Supplier<List<HostInfo>> instances, HostInfo self) {
        this.local = local;
        this.instances = instances;
        this.self = self;
        this.http = HttpClient.newBuilder().connectTimeout(PEER_TIMEOUT).build();
    }

    /**
     * This instance's namespaces alone (what a peer asks for), or the cluster's with the caller's key: every peer is
     * asked at once, and the answer waits at most {@link #PEER_TIMEOUT} whatever their number.
     */
    public Listing list(boolean localOnly, String presentedKey) {
        TreeSet<String> names = new TreeSet<>(local.get());
        if (localOnly) {
            return new Listing(List.copyOf(names), 1, false, List.of());
        }
        List<HostInfo> peers = new ArrayList<>();
        for (HostInfo h : instances.get()) {
            if (!h.equals(self) && !peers.contains(h)) {
                peers.add(h);
            }
        }
        List<CompletableFuture<JsonNode>> asked = new ArrayList<>();
        for (HostInfo peer : peers) {
            asked.add(ask(peer, presentedKey));
        }
        List<String> unreachable = new ArrayList<>();
        for (int i = 0; i < peers.size(); i++) {
            try {
                asked.get(i).join().path("namespaces").forEach(n -> names.add(n.asText()));
            } catch (CompletionException | CancellationException e) {
                unreachable.add(peers.get(i).host() + ":" + peers.get(i).port());
            }
        }
        return new Listing(List.copyOf(names), peers.size() + 1, !unreachable.isEmpty(), unreachable);
    }

    /** A peer's own namespaces; fails when it does not answer 200 in time (a peer rebalancing answers 503). */
    private CompletableFuture<JsonNode> ask(HostInfo peer, String presentedKey) {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://" + peer.host() + ":" + peer.port() + "/v1/namespaces?scope=" + LOCAL_SCOPE))
                .timeout(PEER_TIMEOUT)
                .GET();
        if (presentedKey != null) {
            request.header("Authorization", "Bearer " + presentedKey);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
                .orTimeout(PEER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .thenApply(r -> {
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException("answered " + r.statusCode());
                    }
                    try {
                        return Json.mapper().readTree(r.body());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
    }
}
