package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The understanding's embeddings, with the real ONNX model and the rule extractor. */
class PassageUnderstanderTest {

    /** Vectors compared bit for bit. */
    private static final Comparator<float[]> SAME_BITS = (a, b) -> Arrays.equals(a, b) ? 0 : 1;

    private static OnnxEmbedder model;
    private static RuleExtractor extractor;

    @BeforeAll
    static void load() {
        model = OnnxEmbedder.allMiniLmL6V2(256, 1);
        extractor = new RuleExtractor(new EnglishNlp(), 3);
    }

    @AfterAll
    static void close() {
        model.close();
    }

    /** The model, counting the texts it embeds. */
    private static final class Counting implements Embedder {
        final AtomicInteger texts = new AtomicInteger();
        final List<String> seen = new ArrayList<>();

        @Override
        public String modelId() {
            return model.modelId();
        }

        @Override
        public int dimensions() {
            return model.dimensions();
        }

        @Override
        public float[] embed(String text) {
            texts.incrementAndGet();
            seen.add(text);
            return model.embed(text);
        }

        @Override
        public void close() {}
    }

    private static PassageEvent.Upsert passage(String namespace, String id, String text) {
        return new PassageEvent.Upsert(
                namespace, id, 1, id + "#0", 0, "h-" + id, "T", List.of(), text, 0, text.length(), null, null);
    }

    @Test
    void entityAndFactTextsSeenBeforeInTheNamespaceReuseTheirVectorsUnchanged() {
        Counting counting = new Counting();
        PassageUnderstander understander = new PassageUnderstander(extractor, counting, false);
        PassageEvent.Upsert first = passage("wiki", "a", "Ada Lovelace worked with Charles Babbage in London.");
        PassageEvent.Upsert second = passage("wiki", "b", "Ada Lovelace wrote notes on the engine of Charles Babbage.");
        Extraction x = understander.extract(second);
        assertThat(x.entities()).as("the passages share entities").isNotEmpty();

        understander.understand(first);
        int before = counting.texts.get();
        Understanding reused = understander.understand(second);
        int embedded = counting.texts.get() - before;

        PassageUnderstander fresh = new PassageUnderstander(extractor, model, false, 0);
        Understanding alone = fresh.understand(second);
        int all = 1
                + (x.memory().equals(second.text()) ? 0 : 1)
                + x.entities().size()
                + x.facts().size()
                + x.questions().size();
        assertThat(embedded)
                .as("texts seen with the first passage are not embedded again")
                .isLessThan(all);
        assertThat(understander.reused()).isEqualTo(all - embedded);
        assertThat(understander.embedded()).as("texts the model embedded").isEqualTo(counting.texts.get());
        // the same vectors as without reuse, bit for bit
        assertThat(reused.embeddings().entities())
                .usingElementComparator(SAME_BITS)
                .containsExactlyElementsOf(alone.embeddings().entities());
        assertThat(reused.embeddings().facts())
                .usingElementComparator(SAME_BITS)
                .containsExactlyElementsOf(alone.embeddings().facts());
        assertThat(reused.embeddings().passage())
                .containsExactly(alone.embeddings().passage());

        // another namespace reuses nothing of this one's
        int beforeOther = counting.texts.get();
        understander.understand(passage("other", "b", second.text()));
        assertThat(counting.texts.get() - beforeOther).isEqualTo(all);
    }

    @Test
    void theMemoryIsEmbeddedOnlyWithMemoryVectorsOnAndItsVectorIsThenTheModelsOwn() {
        // a pronoun makes the memory a text of its own ("He" becomes the name)
        PassageEvent.Upsert p = passage("wiki", "a", "Charles Babbage was a mathematician. He designed the engine.");
        Extraction x = extractor.extract(p);
        assertThat(x.memory()).as("the memory differs from the passage").isNotEqualTo(p.text());

        Counting on = new Counting();
        PassageUnderstander with = new PassageUnderstander(extractor, on, false, 0, true);
        Understanding kept = with.embed(p, x);
        assertThat(on.seen).contains(x.memory());
        assertThat(kept.embeddings().memory()).containsExactly(model.embed(x.memory()));
        assertThat(with.textsToEmbed(p, x).get(Understander.TextKind.MEMORY)).containsExactly(x.memory());

        Counting off = new Counting();
        PassageUnderstander without = new PassageUnderstander(extractor, off, false, 0, false);
        Understanding spared = without.embed(p, x);
        assertThat(off.seen).doesNotContain(x.memory()).hasSize(on.seen.size() - 1);
        assertThat(without.textsToEmbed(p, x).get(Understander.TextKind.MEMORY)).isEmpty();
        assertThat(spared.embeddings().memory()).isEmpty();
        // everything else is what it is with the memory embedded, bit for bit
        assertThat(spared.embeddings().passage())
                .containsExactly(kept.embeddings().passage());
        assertThat(spared.embeddings().entities())
                .usingElementComparator(SAME_BITS)
                .containsExactlyElementsOf(kept.embeddings().entities());
        assertThat(spared.embeddings().facts())
                .usingElementComparator(SAME_BITS)
                .containsExactlyElementsOf(kept.embeddings().facts());
        assertThat(spared.embeddings().questions())
                .usingElementComparator(SAME_BITS)
                .containsExactlyElementsOf(kept.embeddings().questions());

        // a memory equal to its passage is never embedded twice: with memory vectors on it has the passage's vector
        PassageEvent.Upsert plain = passage("wiki", "b", "Charles Babbage designed the engine.");
        Extraction same = extractor.extract(plain);
        assertThat(same.memory()).isEqualTo(plain.text());
        Understanding shared = with.embed(plain, same);
        assertThat(shared.embeddings().memory())
                .containsExactly(shared.embeddings().passage());
        assertThat(without.embed(plain, same).embeddings().memory()).isEmpty();
    }

    @Test
    void reuseIsBoundedAndCanBeTurnedOff() {
        Counting counting = new Counting();
        PassageUnderstander none = new PassageUnderstander(extractor, counting, false, 0);
        PassageEvent.Upsert p = passage("wiki", "a", "Ada Lovelace worked with Charles Babbage in London.");
        none.understand(p);
        int once = counting.texts.get();
        none.understand(p);
        assertThat(counting.texts.get()).isEqualTo(2 * once);

        Counting small = new Counting();
        PassageUnderstander one = new PassageUnderstander(extractor, small, false, 1);
        one.understand(p);
        int first = small.texts.get();
        one.understand(p);
        assertThat(small.texts.get() - first)
                .as("with room for one text, at most one is reused")
                .isBetween(first - 1, first);
    }
}
