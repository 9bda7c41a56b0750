package dev.engram.topology;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.EnglishNlp;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.OnnxEmbedder;
import dev.engram.understanding.PassageUnderstander;
import dev.engram.understanding.RuleExtractor;
import dev.engram.understanding.Understander;
import java.util.concurrent.atomic.AtomicInteger;

/** One real embedded understander per test JVM (the ONNX and OpenNLP models load once). */
public final class Understanders {

    private static PassageUnderstander shared;

    private Understanders() {}

    public static synchronized Understander embedded() {
        if (shared == null) {
            shared = new PassageUnderstander(
                    new RuleExtractor(new EnglishNlp(), 3), OnnxEmbedder.allMiniLmL6V2(256, 1), false);
        }
        return shared;
    }

    /**
     * The real understander behind an extractor that reports itself as cacheable (as the LLM extractor does) and
     * counts its calls, to prove that the extraction cache spares them.
     */
    public static Understander cachingCounting(AtomicInteger calls) {
        Understander real = embedded();
        Extractor extractor = new Extractor() {
            @Override
            public String id() {
                return "counting/1";
            }

            @Override
            public boolean cacheable() {
                return true;
            }

            @Override
            public Extraction extract(PassageEvent.Upsert passage) {
                calls.incrementAndGet();
                return real.extract(passage);
            }
        };
        return wrap(real, extractor);
    }

    private static Understander wrap(Understander real, Extractor extractor) {
        return new Understander() {
            @Override
            public Extractor extractor() {
                return extractor;
            }

            @Override
            public Embedder embedder() {
                return real.embedder();
            }

            @Override
            public Understanding embed(PassageEvent.Upsert passage, Extraction extraction) {
                return real.embed(passage, extraction);
            }

            @Override
            public void close() {}
        };
    }

    /** The real understander, except that passages containing {@code marker} fail as a broken extractor would. */
    public static Understander failingOn(String marker) {
        Understander real = embedded();
        Extractor extractor = new Extractor() {
            @Override
            public String id() {
                return real.extractor().id();
            }

            @Override
            public boolean cacheable() {
                return false;
            }

            @Override
            public Extraction extract(PassageEvent.Upsert passage) {
                if (passage.text().contains(marker)) {
                    throw new ExtractionException("extractor failed on this passage");
                }
                return real.extract(passage);
            }
        };
        return wrap(real, extractor);
    }
}
