package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.JsonSerde;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class EmbeddingsSerdeTest {

    private final EmbeddingsSerde serde = new EmbeddingsSerde();

    private static float[] random(Random r, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    private static void assertSame(Embeddings a, Embeddings b) {
        assertThat(b.passage()).isEqualTo(a.passage());
        assertThat(b.memory()).isEqualTo(a.memory());
        for (int k = 0; k < 3; k++) {
            List<float[]> x = List.of(a.entities(), a.facts(), a.questions()).get(k);
            List<float[]> y = List.of(b.entities(), b.facts(), b.questions()).get(k);
            assertThat(y).hasSameSizeAs(x);
            for (int i = 0; i < x.size(); i++) {
                assertThat(Arrays.equals(x.get(i), y.get(i))).isTrue();
            }
        }
    }

    @Test
    void roundTripsRoundedVectorsBitForBitInHalfTheBytesOfFloat32() {
        Random r = new Random(3);
        Embeddings e = StoredVectors.round(new Embeddings(
                random(r, 384),
                null,
                List.of(random(r, 384), random(r, 384)),
                List.of(),
                List.of(random(r, 384), new float[0], new float[] {Float.NaN, -0f, Float.MIN_VALUE})));
        byte[] bytes = serde.serializer().serialize("t", e);
        assertSame(e, serde.deserializer().deserialize("t", bytes));
        assertThat(bytes.length).isLessThan(float32(e).length * 55 / 100);
        assertThat(serde.serializer().serialize("t", null)).isNull();
        assertThat(serde.deserializer().deserialize("t", null)).isNull();
    }

    @Test
    void readsValuesStoredInFloat32ByEarlierVersions() {
        Random r = new Random(5);
        Embeddings e = new Embeddings(
                random(r, 8), null, List.of(random(r, 8)), List.of(), List.of(random(r, 8), new float[0]));
        assertSame(StoredVectors.round(e), serde.deserializer().deserialize("t", float32(e)));
    }

    /** The layout earlier versions wrote: version 0xE1, each vector as its length and float32 values. */
    private static byte[] float32(Embeddings e) {
        ByteBuffer out = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        out.put((byte) 0xE1);
        Consumer<float[]> put = v -> {
            out.putInt(v == null ? -1 : v.length);
            if (v != null) {
                for (float x : v) {
                    out.putFloat(x);
                }
            }
        };
        put.accept(e.passage());
        put.accept(e.memory());
        for (List<float[]> list : List.of(e.entities(), e.facts(), e.questions())) {
            out.putInt(list.size());
            list.forEach(put);
        }
        return Arrays.copyOf(out.array(), out.position());
    }

    @Test
    void readsValuesStoredAsJsonByEarlierVersions() {
        Random r = new Random(4);
        Embeddings e =
                new Embeddings(random(r, 8), random(r, 8), List.of(random(r, 8)), List.of(random(r, 8)), List.of());
        byte[] json = JsonSerde.of(Embeddings.class).serializer().serialize("t", e);
        assertSame(StoredVectors.round(e), serde.deserializer().deserialize("t", json));
    }

    @Test
    void refusesTruncatedOrForeignBytes() {
        byte[] bytes = serde.serializer()
                .serialize("t", new Embeddings(new float[16], null, List.of(new float[4]), List.of(), List.of()));
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", Arrays.copyOf(bytes, bytes.length - 3)))
                .isInstanceOf(SerializationException.class);
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", Arrays.copyOf(bytes, bytes.length + 1)))
                .isInstanceOf(SerializationException.class);
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {7, 0, 0}))
                .isInstanceOf(SerializationException.class);
        // a width other than 2 or 4, and a list holding no vector (-1), in the current format
        byte[] width = ByteBuffer.allocate(1 + 4 + 1 + 4 * 3)
                .order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) 0xE2)
                .putInt(1)
                .put((byte) 3)
                .array();
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", width))
                .isInstanceOf(SerializationException.class);
        byte[] holes = ByteBuffer.allocate(1 + 4 + 4 + 4 + 4 + 4 + 4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) 0xE2)
                .putInt(-1)
                .putInt(-1)
                .putInt(1)
                .putInt(-1)
                .putInt(0)
                .putInt(0)
                .array();
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", holes))
                .isInstanceOf(SerializationException.class);
    }
}
