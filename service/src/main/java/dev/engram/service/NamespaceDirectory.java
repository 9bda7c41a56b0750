package dev.engram.service;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The namespaces of the whole cluster: this instance's own, and those every other instance of the memory step says it
 * holds, asked in parallel. An instance that does not answer in time is named in the listing instead of failing it.
 */
final class NamespaceDirectory {

    /** {@code GET /v1/namespaces}: sorted names, and the instances that could not be asked. */
    record Listing(List<String> namespaces, int instances, List<String> unreachable) {}

    static final String LOCAL_SCOPE = "local";
    private static final Duration PEER_TIMEOUT = Duration.ofSeconds(5);

    private final Supplier<List<String>> local;
    private final Supplier<List<HostInfo>> instances;
    private final HostInfo self;
    private final HttpClient http;

    /**
     * @param local the namespaces this instance's memory holds
     * @param instances every instance of the memory step, this one included
     */
    NamespaceDirectory(Supplier<List<String>> local, Supplier<List<HostInfo>> instances, HostInfo self) {
        this.local = local;
        this.instances = instances;
        this.self = self;
        this.http = HttpClient.newBuilder().connectTimeout(PEER_TIMEOUT).build();
    }

    /** This instance's namespaces alone (what a peer asks for), or the cluster's with the caller's key. */
    Listing list(boolean localOnly, String presentedKey) {
        TreeSet<String> names = new TreeSet<>(local.get());
        if (localOnly) {
            return new Listing(List.copyOf(names), 1, List.of());
        }
        List<HostInfo> peers = new ArrayList<>();
        for (HostInfo h : instances.get()) {
            if (!h.equals(self) && !peers.contains(h)) {
                peers.add(h);
            }
        }
        List<CompletableFuture<JsonNode>> asked = new ArrayList<>();
        for (HostInfo peer : peers) {
            asked.add(CompletableFuture.supplyAsync(() -> ask(peer, presentedKey)));
        }
        List<String> unreachable = new ArrayList<>();
        for (int i = 0; i < peers.size(); i++) {
            try {
                asked.get(i).join().path("namespaces").forEach(n -> names.add(n.asText()));
            } catch (CompletionException e) {
                unreachable.add(peers.get(i).host() + ":" + peers.get(i).port());
            }
        }
        return new Listing(List.copyOf(names), peers.size() + 1, unreachable);
    }

    private JsonNode ask(HostInfo peer, String presentedKey) {
        try {
            HttpResponse<String> r = ApiCalls.send(
                    http,
                    "http://" + peer.host() + ":" + peer.port(),
                    "GET",
                    "/v1/namespaces?scope=" + LOCAL_SCOPE,
                    null,
                    presentedKey,
                    PEER_TIMEOUT);
            if (r.statusCode() != 200) {
                throw new IllegalStateException("answered " + r.statusCode());
            }
            return Json.mapper().readTree(r.body());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
