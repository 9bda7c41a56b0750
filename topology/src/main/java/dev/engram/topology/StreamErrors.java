package dev.engram.topology;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What escapes the processors goes where the processors send their own failures: a record Kafka Streams cannot
 * deserialize, a failure inside an operator of the topology (outside a processor's own guard), and an output that
 * cannot be written are dead-lettered with the input's original bytes, counted, and the partition moves on; a
 * transient broker failure is retried instead. Configured on both stream applications with
 * {@link #configure(Map, Topics, Meters)}.
 */
public final class StreamErrors {

    private static final Logger LOG = LoggerFactory.getLogger(StreamErrors.class);
    static final String TOPICS = "engram.stream.errors.topics";
    static final String METERS = "engram.stream.errors.meters";

    private StreamErrors() {}

    /** Sets the three handlers in a Streams configuration. */
    public static void configure(Map<Object, Object> props, Topics topics, Meters meters) {
        props.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, Deserialization.class);
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, Processing.class);
        props.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, Production.class);
        props.put(TOPICS, topics);
        props.put(METERS, meters);
    }

    /** The step a record of this topic feeds. */
    static DeadLetter.Stage stageOf(Topics topics, String topic) {
        if (topic == null || topic.equals(topics.documents().name())) {
            return DeadLetter.Stage.READ;
        }
        if (topic.equals(topics.passages().name())
                || topic.equals(topics.extractions().name())) {
            return DeadLetter.Stage.UNDERSTAND;
        }
        return DeadLetter.Stage.CONSTRUCT;
    }

    /** Shared by the three handlers: builds and counts the dead letter of the input record in {@code context}. */
    abstract static class Handler {

        /**
         * Outputs whose loss is recorded by the input's dead letter: what the ingest steps hand on (the input can be
         * sent again). Not a changelog, not the memory changes, not the dead letters themselves.
         */
        boolean droppable(String topic) {
            return topic != null
                    && (topic.equals(topics.passages().name())
                            || topic.equals(topics.understandings().name())
                            || topic.equals(topics.extractions().name()));
        }

        private Topics topics;
        private Meters meters;

        public void configure(Map<String, ?> configs) {
            this.topics = (Topics) Objects.requireNonNull(configs.get(TOPICS), TOPICS);
            this.meters = (Meters) Objects.requireNonNull(configs.get(METERS), METERS);
        }

        List<ProducerRecord<byte[], byte[]>> deadLetter(
                ErrorHandlerContext context, DeadLetter.Cause cause, String what, Exception e) {
            return deadLetter(context, cause, what, e, e.toString());
        }

        /** The dead letter of the input, whose reason is {@code what: why}. */
        List<ProducerRecord<byte[], byte[]>> deadLetter(
                ErrorHandlerContext context, DeadLetter.Cause cause, String what, Exception e, String why) {
            DeadLetter.Stage stage = stageOf(topics, context.topic());
            meters.deadLetter(stage, cause);
            LOG.warn(
                    "{} record {}-{}@{} dead-lettered: {}",
                    stage.wireName(),
                    context.topic(),
                    context.partition(),
                    context.offset(),
                    e.toString());
            DeadLetter letter = DeadLetter.of(
                    stage,
                    cause,
                    what + ": " + why,
                    context.topic() == null ? "" : context.topic(),
                    context.partition(),
                    context.offset(),
                    context.sourceRawKey(),
                    context.sourceRawValue(),
                    Instant.now());
            Topic<byte[], DeadLetter> dlq = topics.deadLetters();
            return List.of(new ProducerRecord<>(
                    dlq.name(),
                    null,
                    DeadLetter.boundedKey(context.sourceRawKey()),
                    dlq.valueSerde().serializer().serialize(dlq.name(), letter)));
        }
    }

    /** A record that is not what its topic holds. */
    public static final class Deserialization extends Handler implements DeserializationExceptionHandler {
        @Override
        public Response handleError(
                ErrorHandlerContext context, ConsumerRecord<byte[], byte[]> record, Exception exception) {
            // the serde's message says what is wrong with the bytes (see JsonSerde); the exception's class adds nothing
            return Response.resume(deadLetter(
                    context,
                    DeadLetter.Cause.UNDECODABLE,
                    "cannot read the record",
                    exception,
                    exception.getMessage() == null ? exception.toString() : exception.getMessage()));
        }
    }

    /**
     * A failure in an operator of the topology that no processor guarded. A {@link StreamsException} is not the
     * input's fault (a store that cannot be written, a memory update that could not be committed): the task fails and
     * exactly-once rolls back what it wrote, never a half-applied record dead-lettered.
     */
    public static final class Processing extends Handler implements ProcessingExceptionHandler {
        @Override
        public Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
            if (exception instanceof StreamsException) {
                return Response.fail();
            }
            return Response.resume(
                    deadLetter(context, DeadLetter.Cause.ERROR, "failed in " + context.processorNodeId(), exception));
        }
    }

    /**
     * An output of the ingest steps that cannot be written (too large, not serializable) is dead-lettered with its
     * input; a transient broker failure is retried; any other output that cannot be written fails the task.
     */
    public static final class Production extends Handler implements ProductionExceptionHandler {
        @Override
        public Response handleError(
                ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
            if (exception instanceof RetriableException) {
                return Response.retry();
            }
            if (!droppable(record.topic())) {
                // A store's changelog, the memory changes or a dead letter: dropping it would make the stores, the
                // mirrors or the count of inputs silently wrong. The task fails; exactly-once rolls it back.
                return Response.fail();
            }
            if (!(exception instanceof RecordTooLargeException)) {
                LOG.warn("cannot write to {}: {}", record.topic(), exception.toString());
            }
            return Response.resume(
                    deadLetter(context, DeadLetter.Cause.UNWRITABLE, "cannot write to " + record.topic(), exception));
        }

        @Override
        public Response handleSerializationError(
                ErrorHandlerContext context,
                ProducerRecord record,
                Exception exception,
                SerializationExceptionOrigin origin) {
            if (!droppable(record.topic())) {
                return Response.fail();
            }
            return Response.resume(deadLetter(
                    context, DeadLetter.Cause.UNWRITABLE, "cannot serialize for " + record.topic(), exception));
        }
    }
}
