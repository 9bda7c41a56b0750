package dev.engram.topology;

import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.understanding.EmbeddedUnderstander;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.Understander;

/** One real embedded understander per test JVM (the ONNX model loads once). */
final class Understanders {

    private static EmbeddedUnderstander shared;

    private Understanders() {}

    static synchronized Understander embedded() {
        if (shared == null) {
            shared = new EmbeddedUnderstander(OnnxEmbedder.allMiniLmL6V2(256, 1));
        }
        return nonClosing(shared);
    }

    /** The real understander, except that passages containing {@code marker} fail as a broken extractor would. */
    static Understander failingOn(String marker) {
        Understander real = embedded();
        return new Understander() {
            @Override
            public String extractor() {
                return real.extractor();
            }

            @Override
            public Embedder embedder() {
                return real.embedder();
            }

            @Override
            public Understanding understand(PassageEvent.Upsert passage) {
                if (passage.text().contains(marker)) {
                    throw new IllegalStateException("extractor failed on this passage");
                }
                return real.understand(passage);
            }

            @Override
            public void close() {}
        };
    }

    private static Understander nonClosing(Understander real) {
        return new Understander() {
            @Override
            public String extractor() {
                return real.extractor();
            }

            @Override
            public Embedder embedder() {
                return real.embedder();
            }

            @Override
            public Understanding understand(PassageEvent.Upsert passage) {
                return real.understand(passage);
            }

            @Override
            public void close() {}
        };
    }
}
