package dev.engram.service;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.service.app.EngramConfig;
import dev.engram.topology.TestDocuments;
import dev.engram.topology.Topics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Helpers for integration tests: configurations, a producer, and an HTTP client with bounded waits. */
public final class ItSupport {

    public static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private ItSupport() {}

    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A configuration for one instance against {@code bootstrap}, with its own HTTP port and state dir. */
    public static EngramConfig config(String bootstrap, String appId, String prefix, Path stateDir, int partitions) {
        return config(bootstrap, appId, prefix, stateDir, partitions, Map.of());
    }

    /** With {@code extra} settings (ENGRAM_* variables) over the test defaults. */
    public static EngramConfig config(
            String bootstrap, String appId, String prefix, Path stateDir, int partitions, Map<String, String> extra) {
        Map<String, String> env = environment(bootstrap, appId, prefix, stateDir, partitions, freePort());
        env.putAll(extra);
        return EngramConfig.from(env);
    }

    /** The ENGRAM_* variables of a test instance (for a service in this JVM, or in a process of its own). */
    public static Map<String, String> environment(
            String bootstrap, String appId, String prefix, Path stateDir, int partitions, int port) {
        Map<String, String> env = new HashMap<>();
        env.put("ENGRAM_BOOTSTRAP_SERVERS", bootstrap);
        env.put("ENGRAM_APPLICATION_ID", appId);
        env.put("ENGRAM_TOPIC_PREFIX", prefix);
        env.put("ENGRAM_PARTITIONS", Integer.toString(partitions));
        env.put("ENGRAM_STATE_DIR", stateDir.toString());
        env.put("ENGRAM_HTTP_HOST", "127.0.0.1");
        env.put("ENGRAM_HTTP_PORT", Integer.toString(port));
        env.put("ENGRAM_ADVERTISED_HOST", "127.0.0.1");
        env.put("ENGRAM_STREAM_THREADS", "1");
        env.put("ENGRAM_COMMIT_INTERVAL_MS", "100");
        env.put("ENGRAM_ROCKSDB_MEMORY_MB", "32");
        env.put("ENGRAM_EMBED_THREADS", "1");
        env.put("ENGRAM_AUTH", "disabled");
        return env;
    }

    public static KafkaProducer<String, byte[]> producer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    public static void send(KafkaProducer<String, byte[]> producer, String topic, String key, byte[] value) {
        try {
            producer.send(new ProducerRecord<>(topic, key, value)).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("produce failed", e);
        }
    }

    public static byte[] upsert(String ns, String id, String title, String text) {
        return TestDocuments.upsert(ns, id, title, text);
    }

    public static byte[] delete(String ns, String id) {
        return TestDocuments.delete(ns, id);
    }

    /**
     * The committed records of a topic from its start: polls until at least {@code atLeast} arrived and a poll comes
     * back empty, or {@code timeout} ends.
     */
    public static <K, V> List<ConsumerRecord<K, V>> readCommitted(
            String bootstrap,
            String topic,
            Deserializer<K> keys,
            Deserializer<V> values,
            int atLeast,
            Duration timeout) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<K, V>> out = new ArrayList<>();
        try (var consumer = new KafkaConsumer<>(p, keys, values)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                var records = consumer.poll(Duration.ofMillis(500));
                records.forEach(out::add);
                if (records.isEmpty() && out.size() >= atLeast) {
                    break;
                }
            }
        }
        return out;
    }

    public record Response(int status, JsonNode body, HttpResponse<String> raw) {}

    public static Response get(String url) {
        return call(HttpRequest.newBuilder(URI.create(url)).GET());
    }

    public static Response post(String url, String json) {
        return call(HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)));
    }

    /** At least {@code atLeast} committed dead letters of an instance's topic (all of them, once it is quiet). */
    public static List<DeadLetter> deadLetters(String bootstrap, Topics topics, int atLeast) {
        List<DeadLetter> out = readCommitted(
                        bootstrap,
                        topics.deadLetters().name(),
                        new ByteArrayDeserializer(),
                        topics.deadLetters().valueSerde().deserializer(),
                        atLeast,
                        Duration.ofSeconds(30))
                .stream()
                .map(ConsumerRecord::value)
                .toList();
        if (out.size() < atLeast) {
            throw new AssertionError("only " + out.size() + " dead letters, expected at least " + atLeast);
        }
        return out;
    }

    /** A GET with an API key. */
    public static Response get(String url, String key) {
        return call(HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + key)
                .GET());
    }

    /** A POST with an API key. */
    public static Response post(String url, String json, String key) {
        return call(HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + key)
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)));
    }

    public static Response call(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r =
                    HTTP.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode body = null;
            String ct = r.headers().firstValue("Content-Type").orElse("");
            if (ct.startsWith("application/json") && !r.body().isEmpty()) {
                body = Json.mapper().readTree(r.body());
            }
            return new Response(r.statusCode(), body, r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Polls {@code probe} until it passes or {@code timeout} ends; returns the last response. */
    public static Response awaitResponse(Duration timeout, Supplier<Response> probe, Predicate<Response> done) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Response last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = probe.get();
                if (done.test(last)) {
                    return last;
                }
            } catch (UncheckedIOException e) {
                // not listening yet
            }
            try {
                TimeUnit.MILLISECONDS.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("condition not met within " + timeout + "; last response: "
                + (last == null ? "none" : last.status() + " " + last.raw().body()));
    }

    /** Waits until every listed document of the namespace is VERIFIED (through {@code base}). */
    public static void awaitVerified(String base, String ns, List<String> ids) {
        awaitVerified(base, ns, ids, null);
    }

    /** Waits until every listed document of the namespace is VERIFIED, asking with an API key (null: none). */
    public static void awaitVerified(String base, String ns, List<String> ids, String key) {
        for (String id : ids) {
            String url = base + "/v1/namespaces/" + ns + "/documents/"
                    + URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
            awaitResponse(
                    Duration.ofSeconds(60),
                    () -> key == null ? get(url) : get(url, key),
                    r -> r.status() == 200 && r.body().path("status").asText().equals("VERIFIED"));
        }
    }

    /** How many objects of {@code kind} a consistency report finds in {@code mirror} ({@code neo4j}, {@code qdrant:<vector>}). */
    public static long mirrored(JsonNode report, String mirror, String kind) {
        for (JsonNode check : report.path("checks")) {
            if (check.path("mirror").asText().equals(mirror)
                    && check.path("kind").asText().equals(kind)) {
                return check.path("mirrored").asLong();
            }
        }
        throw new AssertionError("no check of " + kind + " in " + mirror + ": " + report);
    }
}
