package dev.engram.sinks;

import io.qdrant.client.QdrantClient;
import io.qdrant.client.QdrantGrpcClient;
import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.condition.EnabledIf;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.qdrant.QdrantContainer;

/**
 * The vector mirror's contract against a real Qdrant: the server at {@code QDRANT_URL} (gRPC, e.g.
 * {@code http://localhost:6334}, with {@code QDRANT_API_KEY} if it needs one) when that is set, else a Qdrant
 * container when Docker is present; skipped otherwise (the build machines have neither, and run the same contract
 * against the stand-in).
 */
@EnabledIf("available")
class RealQdrantMirrorTest extends QdrantMirrorContract {

    /** The image the compose stack runs. */
    static final String IMAGE = "qdrant/qdrant:v1.18.0";

    private static QdrantContainer container;
    private QdrantClient client;

    static boolean available() {
        return System.getenv("QDRANT_URL") != null
                || DockerClientFactory.instance().isDockerAvailable();
    }

    private static synchronized QdrantMirror.Settings server(String prefix) {
        String url = System.getenv("QDRANT_URL");
        if (url != null) {
            URI uri = URI.create(url);
            return new QdrantMirror.Settings(
                    uri.getHost(),
                    uri.getPort() < 0 ? 6334 : uri.getPort(),
                    "https".equals(uri.getScheme()),
                    System.getenv("QDRANT_API_KEY"),
                    prefix,
                    Duration.ofSeconds(10));
        }
        if (container == null) {
            container = new QdrantContainer(IMAGE);
            container.start(); // one per test JVM, stopped by Testcontainers' reaper
        }
        return new QdrantMirror.Settings(
                container.getHost(), container.getMappedPort(6334), false, null, prefix, Duration.ofSeconds(10));
    }

    @Override
    protected QdrantMirror open(String prefix) {
        QdrantMirror.Settings s = server(prefix);
        QdrantGrpcClient.Builder grpc = QdrantGrpcClient.newBuilder(s.host(), s.port(), s.tls());
        if (s.apiKey() != null) {
            grpc.withApiKey(s.apiKey());
        }
        client = new QdrantClient(grpc.build());
        return new QdrantMirror(s);
    }

    @Override
    protected Set<String> collections() throws Exception {
        return new HashSet<>(client.listCollectionsAsync().get());
    }

    @Override
    protected void release() throws Exception {
        for (String c : collections()) {
            if (c.startsWith(prefix)) {
                client.deleteCollectionAsync(c).get();
            }
        }
        client.close();
    }
}
