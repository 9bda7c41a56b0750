package dev.engram.processors;

import dev.engram.schemas.DeadLetter;
import java.time.Instant;
import java.util.Base64;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/** Builds dead letters that point back at the input record. */
final class DeadLetters {

    private DeadLetters() {}

    static Emission.Dead of(
            ProcessorContext<?, ?> context, DeadLetter.Stage stage, String reason, byte[] key, byte[] value) {
        RecordMetadata meta = context.recordMetadata().orElse(null);
        Base64.Encoder b64 = Base64.getEncoder();
        DeadLetter letter = new DeadLetter(
                stage,
                reason,
                meta == null ? "" : meta.topic(),
                meta == null ? -1 : meta.partition(),
                meta == null ? -1 : meta.offset(),
                key == null ? null : b64.encodeToString(key),
                value == null ? null : b64.encodeToString(value),
                Instant.ofEpochMilli(context.currentSystemTimeMs()));
        return new Emission.Dead(key, letter);
    }
}
