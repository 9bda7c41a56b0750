package dev.engram.processors;

import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.understanding.Understander;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * UNDERSTAND: stateless and parallel over passage ids. An upserted passage is understood (memory, entities,
 * embedding); a retraction passes through. A passage that cannot be understood becomes a dead letter.
 */
public final class UnderstandProcessor implements Processor<String, PassageEvent, Void, Emission> {

    private final Understander understander;
    private final Meters meters;
    private ProcessorContext<Void, Emission> context;

    public UnderstandProcessor(Understander understander, Meters meters) {
        this.understander = understander;
        this.meters = meters;
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
    }

    @Override
    public void process(Record<String, PassageEvent> record) {
        UnderstandingEvent out =
                switch (record.value()) {
                    case PassageEvent.Upsert upsert -> understand(record, upsert);
                    case PassageEvent.Retraction retraction -> new UnderstandingEvent.Retracted(retraction);
                };
        if (out != null) {
            context.forward(new Record<Void, Emission>(
                    null, new Emission.Understood(out), record.timestamp(), record.headers()));
        }
    }

    private UnderstandingEvent understand(Record<String, PassageEvent> record, PassageEvent.Upsert upsert) {
        long t0 = System.nanoTime();
        Understanding understanding;
        try {
            understanding = understander.understand(upsert);
        } catch (StreamsException e) {
            throw e;
        } catch (RuntimeException e) {
            meters.deadLetter("understand", "extractor_error");
            byte[] key = record.key() == null ? null : record.key().getBytes(StandardCharsets.UTF_8);
            context.forward(new Record<Void, Emission>(
                    null,
                    DeadLetters.of(
                            context,
                            DeadLetter.Stage.UNDERSTAND,
                            "understanding failed: " + e,
                            key,
                            Json.toBytes(upsert)),
                    record.timestamp(),
                    record.headers()));
            return null;
        }
        meters.understood(understander.extractor(), Duration.ofNanos(System.nanoTime() - t0));
        return new UnderstandingEvent.Understood(upsert, understanding);
    }
}
