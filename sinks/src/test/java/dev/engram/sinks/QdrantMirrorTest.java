package dev.engram.sinks;

import static dev.engram.sinks.MirrorRecords.passage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The vector mirror's contract against {@link QdrantStandIn} — a stand-in for a Qdrant server, since none can run on
 * the build machines — plus what only a stand-in can stage: a server that fails on demand, and the payload index.
 */
class QdrantMirrorTest extends QdrantMirrorContract {

    private final QdrantStandIn standIn = new QdrantStandIn();
    private Server server;

    @Override
    protected QdrantMirror open(String prefix) throws Exception {
        ServerBuilder<?> builder = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
        standIn.services().forEach(builder::addService);
        server = builder.build().start();
        return new QdrantMirror(
                new QdrantMirror.Settings("localhost", server.getPort(), false, null, prefix, Duration.ofSeconds(5)));
    }

    @Override
    protected Set<String> collections() {
        return standIn.collections.keySet();
    }

    @Override
    protected void release() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void namespacesAreATenantPayloadIndex() {
        vectors.apply(List.of(passage("ns", "p1", "doc", 1, "first", 4)));
        assertThat(standIn.collections.get(prefix + "passage").indexes()).containsKey("namespace");
    }

    @Test
    void anUnavailableServerIsAFailureOfTheWholeWriteNotARejection() {
        vectors.apply(List.of(passage("ns", "p0", "doc", 1, "first", 4)));
        standIn.failNext.set(1);
        assertThatThrownBy(() -> vectors.apply(List.of(passage("ns", "p1", "doc", 2, "x", 4))))
                .isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> assertThat(SinkFailure.permanent(e)).isFalse());
    }
}
