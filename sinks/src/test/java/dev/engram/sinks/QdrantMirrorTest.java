package dev.engram.sinks;

import static dev.engram.sinks.MirrorRecords.delete;
import static dev.engram.sinks.MirrorRecords.entity;
import static dev.engram.sinks.MirrorRecords.passage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.MirrorRecord.VectorKind;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The vector mirror through the official Qdrant client, over a real socket, against {@link QdrantStandIn} — a stand-in
 * for a Qdrant server, since none can run on the build machines.
 */
class QdrantMirrorTest {

    private final QdrantStandIn standIn = new QdrantStandIn();
    private Server server;
    private QdrantMirror vectors;

    @BeforeEach
    void start() throws IOException {
        ServerBuilder<?> builder = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
        standIn.services().forEach(builder::addService);
        server = builder.build().start();
        vectors = new QdrantMirror(new QdrantMirror.Settings(
                "localhost", server.getPort(), false, null, "engram_", Duration.ofSeconds(5)));
    }

    @AfterEach
    void stop() throws InterruptedException {
        vectors.close();
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void writesOneCollectionPerKindOfVectorWithDeterministicIdsAndVersions() {
        MirrorRecord p = passage("ns", "p1", "doc", 3, "text", 4);
        MirrorRecord e = entity("ns", "e1", "e1", 3, "Ada", 4);
        assertThat(vectors.apply(List.of(p, e, passage("other", "p1", "doc", 9, "x", 4))))
                .isEmpty();

        assertThat(standIn.collections.keySet())
                .containsExactlyInAnyOrder("engram_passage", "engram_memory", "engram_entity");
        assertThat(standIn.collections.get("engram_passage").indexes()).containsKey("namespace");
        Map<VectorKind, Map<String, Long>> held = vectors.versions("ns");
        assertThat(held.get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 3L));
        assertThat(held.get(VectorKind.MEMORY)).isEqualTo(Map.of("p1", 3L));
        assertThat(held.get(VectorKind.ENTITY)).isEqualTo(Map.of("e1", 3L));
        assertThat(vectors.points(p))
                .containsExactlyInAnyOrder(
                        "engram_passage/" + QdrantMirror.pointId("ns", Kind.PASSAGE, "p1"),
                        "engram_memory/" + QdrantMirror.pointId("ns", Kind.PASSAGE, "p1"));
    }

    @Test
    void anOlderVersionNeverOverwritesOrDeletesANewerOne() {
        vectors.apply(List.of(passage("ns", "p1", "doc", 5, "new", 4)));
        vectors.apply(List.of(passage("ns", "p1", "doc", 4, "old", 4), delete("ns", Kind.PASSAGE, "p1", 3)));
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 5L));

        vectors.apply(List.of(delete("ns", Kind.PASSAGE, "p1", 6)));
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEmpty();
        assertThat(vectors.versions("ns").get(VectorKind.MEMORY)).isEmpty();
    }

    @Test
    void aVectorQdrantRejectsIsReportedAndTheRestOfTheBatchIsWritten() {
        vectors.apply(List.of(passage("ns", "p0", "doc", 1, "first", 4)));
        MirrorRecord wrongDimension = passage("ns", "p1", "doc", 2, "bad", 3);
        MirrorRecord fine = passage("ns", "p2", "doc", 2, "good", 4);

        Map<MirrorRecord, String> rejected = vectors.apply(List.of(wrongDimension, fine));

        assertThat(rejected).containsOnlyKeys(wrongDimension);
        assertThat(rejected.get(wrongDimension)).contains("dimension");
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEqualTo(Map.of("p0", 1L, "p2", 2L));
    }

    @Test
    void anUnavailableServerIsAFailureOfTheWholeWriteNotARejection() {
        vectors.apply(List.of(passage("ns", "p0", "doc", 1, "first", 4)));
        standIn.failNext.set(1);
        assertThatThrownBy(() -> vectors.apply(List.of(passage("ns", "p1", "doc", 2, "x", 4))))
                .isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> assertThat(SinkFailure.permanent(e)).isFalse());
    }

    @Test
    void undoRemovesEveryVectorOfTheObjects() {
        MirrorRecord p = passage("ns", "p1", "doc", 3, "text", 4);
        vectors.apply(List.of(p));
        vectors.undo(List.of(p));
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEmpty();
        assertThat(vectors.versions("ns").get(VectorKind.MEMORY)).isEmpty();
    }
}
