package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * The dead letters of one step: an input the step rejects, or fails on, goes to the dead-letter topic with its cause,
 * its reason and its original key and value, pointing back at where it was read, and is counted by stage and cause in
 * the step's {@link Tally}, with the dead letter's transaction.
 * A {@link StreamsException} is not the input's fault (the task must stop and restart): it is never dead-lettered.
 */
final class DeadLetters {

    /** What a failure becomes in its dead letter. */
    record Failure(DeadLetter.Cause cause, String reason) {}

    private final ProcessorContext<Void, Emission> context;
    private final DeadLetter.Stage stage;
    private final Tally tally;
    private final Function<RuntimeException, Failure> classify;

    /**
     * @param tally where the step counts what it dead-letters
     * @param classify the cause and reason of a step's failure
     */
    DeadLetters(
            ProcessorContext<Void, Emission> context,
            DeadLetter.Stage stage,
            Tally tally,
            Function<RuntimeException, Failure> classify) {
        this.context = context;
        this.stage = stage;
        this.tally = tally;
        this.classify = classify;
    }

    /**
     * Runs a step on {@code record}; when it fails, dead-letters the record with {@code key} and {@code value} and
     * returns false.
     */
    boolean guard(Record<?, ?> record, byte[] key, Supplier<byte[]> value, Runnable step) {
        return call(record, key, value, () -> {
                    step.run();
                    return Boolean.TRUE;
                })
                .isPresent();
    }

    /**
     * Runs a step on {@code record} and returns its result (never null); when it fails, dead-letters the record with
     * {@code key} and {@code value} and returns nothing.
     */
    <T> Optional<T> call(Record<?, ?> record, byte[] key, Supplier<byte[]> value, Supplier<T> step) {
        T result;
        try {
            result = step.get();
        } catch (StreamsException e) {
            throw e;
        } catch (RuntimeException e) {
            // A bug or a corrupt input must not stop the stream: dead-letter it with the reason.
            Failure failure = classify.apply(e);
            reject(record, failure.cause(), failure.reason(), key, value.get());
            return Optional.empty();
        }
        return Optional.of(Objects.requireNonNull(result, "a guarded step returns a result"));
    }

    /** Sends {@code record} (as {@code key} and {@code value}) to the dead-letter topic, with its cause and reason. */
    void reject(Record<?, ?> record, DeadLetter.Cause cause, String reason, byte[] key, byte[] value) {
        RecordMetadata meta = context.recordMetadata().orElse(null);
        reject(
                meta == null ? "" : meta.topic(),
                meta == null ? -1 : meta.partition(),
                meta == null ? -1 : meta.offset(),
                record.timestamp(),
                new Failure(cause, reason),
                key,
                value);
    }

    /**
     * Sends a record read earlier — from {@code topic}, {@code partition} at {@code offset} — to the dead-letter topic
     * (from a punctuation, which has no current record).
     */
    void reject(String topic, int partition, long offset, long timestamp, Failure failure, byte[] key, byte[] value) {
        tally.add(Meters.deadLettersKey(stage, failure.cause()));
        DeadLetter letter = DeadLetter.of(
                stage,
                failure.cause(),
                failure.reason(),
                topic,
                partition,
                offset,
                key,
                value,
                Instant.ofEpochMilli(context.currentSystemTimeMs()));
        context.forward(new Record<Void, Emission>(
                null, new Emission.Dead(DeadLetter.boundedKey(key), letter), timestamp, new RecordHeaders()));
    }

    /** A string key as the bytes it was read from, or null. */
    static byte[] utf8(String key) {
        return key == null ? null : key.getBytes(StandardCharsets.UTF_8);
    }
}
