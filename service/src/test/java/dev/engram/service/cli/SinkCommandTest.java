package dev.engram.service.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.service.ItSupport;
import dev.engram.service.http.ApiKeys;
import dev.engram.service.http.HttpApi;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import org.junit.jupiter.api.Test;

/** Who may read the standalone sink's metrics, over its HTTP server. */
class SinkCommandTest {

    private static ItSupport.Response get(String url, String key) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).GET();
        return ItSupport.call(key == null ? b : b.header("Authorization", "Bearer " + key));
    }

    @Test
    void metricsNeedAKeyOfEveryNamespaceUnlessAuthIsDisabled() {
        ApiKeys keys = new ApiKeys(ApiKeys.parseInline("read:*:0perator-key;admin:notes:tenant-key"));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (HttpApi secured = SinkCommand.http(new InetSocketAddress("127.0.0.1", 0), keys, registry, () -> true);
                HttpApi open = SinkCommand.http(new InetSocketAddress("127.0.0.1", 0), null, registry, () -> false)) {
            registry.counter("engram_sink_probe").increment();
            String at = "http://127.0.0.1:" + secured.port();
            assertThat(get(at + "/metrics", "0perator-key").raw().body()).contains("engram_sink_probe");
            assertThat(get(at + "/metrics", "tenant-key").status()).isEqualTo(403);
            ItSupport.Response guess = get(at + "/metrics", "guess");
            assertThat(guess.status()).isEqualTo(401);
            assertThat(guess.raw().headers().firstValue("WWW-Authenticate")).contains("Bearer");
            assertThat(get(at + "/metrics", null).status()).isEqualTo(401);
            assertThat(get(at + "/v1/health", null).body().path("status").asText())
                    .isEqualTo("UP");

            String without = "http://127.0.0.1:" + open.port();
            assertThat(get(without + "/metrics", null).status())
                    .as("ENGRAM_AUTH=disabled")
                    .isEqualTo(200);
            assertThat(get(without + "/v1/health", null).status()).isEqualTo(503);
        }
    }
}
