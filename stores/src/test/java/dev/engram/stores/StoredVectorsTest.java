package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.VectorCodec;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StoredVectorsTest {

    private static float[] unit(Random r, int n) {
        float[] v = new float[n];
        double norm = 0;
        for (int i = 0; i < n; i++) {
            v[i] = (float) r.nextGaussian();
            norm += v[i] * v[i];
        }
        for (int i = 0; i < n; i++) {
            v[i] /= (float) Math.sqrt(norm);
        }
        return v;
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    @Test
    void aRoundedVectorIsStoredInHalfTheBytesAndReadsBackBitForBit() {
        float[] v = StoredVectors.round(unit(new Random(1), 384));
        byte[] stored = StoredVectors.encode(v);
        assertThat(stored).hasSize(1 + 2 * 384);
        assertThat(StoredVectors.decode(stored)).containsExactly(v);
        assertThat(StoredVectors.round(v)).as("rounding is idempotent").containsExactly(v);
    }

    @Test
    void roundingMovesAUnitVectorByFarLessThanTellsTextsApart() {
        Random r = new Random(2);
        for (int i = 0; i < 100; i++) {
            float[] v = unit(r, 384);
            float[] rounded = StoredVectors.round(v);
            assertThat(cosine(v, rounded)).isGreaterThan(0.999_999);
            for (int j = 0; j < v.length; j++) {
                assertThat(Math.abs(rounded[j] - v[j])).isLessThanOrEqualTo(Math.abs(v[j]) / 2048 + 6e-8f);
            }
        }
    }

    @Test
    void aVectorHalfPrecisionCannotHoldStaysFloat32() {
        float[] big = {1e6f, -0.5f, 3f};
        float[] odd = {Float.NaN, Float.NEGATIVE_INFINITY, -0f, Float.MIN_VALUE};
        float[] tiny = {1e-6f, -3e-7f, 2e-9f}; // all below half precision's normal range: the scale would be lost
        for (float[] v : new float[][] {big, odd, tiny}) {
            assertThat(StoredVectors.round(v)).isSameAs(v);
            byte[] stored = StoredVectors.encode(v);
            assertThat(stored).hasSize(4 * v.length);
            assertThat(StoredVectors.decode(stored)).containsExactly(v);
        }
    }

    @Test
    void readsVectorsStoredInFloat32ByEarlierVersionsAndRefusesOtherBytes() {
        float[] v = unit(new Random(3), 16);
        assertThat(StoredVectors.decode(VectorCodec.toBytes(v)))
                .as("rounded as they are read: what a write of the vector would store")
                .containsExactly(StoredVectors.round(v))
                .isNotEqualTo(v);
        assertThat(StoredVectors.decode(StoredVectors.encode(new float[0]))).isEmpty();
        assertThatThrownBy(() -> StoredVectors.decode(new byte[] {1, 2, 3}))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StoredVectors.decode(new byte[] {1, 2, 3, 4, 5, 6}))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
