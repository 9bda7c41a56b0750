package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the Streams-level handlers do with what escapes the processors. */
class StreamErrorsTest {

    private static final Topics TOPICS = new Topics("t.");

    private final Meters meters = Meters.detached();
    private final StreamErrors.Processing processing = new StreamErrors.Processing();
    private final StreamErrors.Production production = new StreamErrors.Production();

    private static ErrorHandlerContext context(String topic, byte[] key, byte[] value) {
        return new ErrorHandlerContext() {
            @Override
            public String topic() {
                return topic;
            }

            @Override
            public int partition() {
                return 0;
            }

            @Override
            public long offset() {
                return 7;
            }

            @Override
            public Headers headers() {
                return new RecordHeaders();
            }

            @Override
            public String processorNodeId() {
                return "construct";
            }

            @Override
            public TaskId taskId() {
                return new TaskId(0, 0);
            }

            @Override
            public long timestamp() {
                return 0;
            }

            @Override
            public byte[] sourceRawKey() {
                return key;
            }

            @Override
            public byte[] sourceRawValue() {
                return value;
            }
        };
    }

    @BeforeEach
    void configure() {
        Map<Object, Object> props = new HashMap<>();
        StreamErrors.configure(props, TOPICS, meters);
        Map<String, Object> configs = new HashMap<>();
        props.forEach((k, v) -> configs.put(k.toString(), v));
        processing.configure(configs);
        production.configure(configs);
    }

    @Test
    void aBugInAnOperatorIsDeadLetteredWithTheInputsBoundedKey() {
        byte[] hugeKey = new byte[100_000];
        Arrays.fill(hugeKey, (byte) 'k');
        ProcessingExceptionHandler.Response r = processing.handleError(
                context(TOPICS.understandings().name(), hugeKey, "v".getBytes(StandardCharsets.UTF_8)),
                new Record<>("k", "v", 0),
                new IllegalStateException("bug"));

        assertThat(r.result()).isEqualTo(ProcessingExceptionHandler.Result.RESUME);
        assertThat(r.deadLetterQueueRecords()).singleElement().satisfies(dlq -> {
            assertThat(dlq.topic()).isEqualTo(TOPICS.deadLetters().name());
            assertThat(dlq.key()).hasSize(DeadLetter.MAX_KEY_BYTES);
            DeadLetter letter = TOPICS.deadLetters().valueSerde().deserializer().deserialize(dlq.topic(), dlq.value());
            assertThat(letter.stage()).isEqualTo(DeadLetter.Stage.CONSTRUCT);
            assertThat(letter.cause()).isEqualTo(DeadLetter.Cause.ERROR);
            assertThat(letter.truncated()).isTrue();
        });
        assertThat(meters.registry()
                        .get(Meters.DEAD_LETTERS)
                        .tag("stage", "construct")
                        .tag("cause", "error")
                        .functionCounter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void aStreamsFailureFailsTheTaskInsteadOfSkippingAHalfAppliedRecord() {
        for (Exception e : new Exception[] {
            new StreamsException("committing the memory update failed"), new ProcessorStateException("disk full")
        }) {
            ProcessingExceptionHandler.Response r = processing.handleError(
                    context(TOPICS.understandings().name(), null, null), new Record<>("k", "v", 0), e);
            assertThat(r.result()).as(e.toString()).isEqualTo(ProcessingExceptionHandler.Result.FAIL);
            assertThat(r.deadLetterQueueRecords()).isEmpty();
        }
    }

    @Test
    void onlyTheIngestStepsOutputsMayBeDroppedAndDeadLettered() {
        ProducerRecord<byte[], byte[]> understanding =
                new ProducerRecord<>(TOPICS.understandings().name(), null);
        ProductionExceptionHandler.Response tooLarge = production.handleError(
                context(TOPICS.passages().name(), null, null), understanding, new RecordTooLargeException("big"));
        assertThat(tooLarge.result()).isEqualTo(ProductionExceptionHandler.Result.RESUME);
        assertThat(tooLarge.deadLetterQueueRecords()).hasSize(1);

        for (String topic : new String[] {
            "app-memory-passages-changelog",
            TOPICS.memoryChanges().name(),
            TOPICS.deadLetters().name()
        }) {
            ProductionExceptionHandler.Response r = production.handleError(
                    context(TOPICS.understandings().name(), null, null),
                    new ProducerRecord<>(topic, null),
                    new RecordTooLargeException("big"));
            assertThat(r.result()).as(topic).isEqualTo(ProductionExceptionHandler.Result.FAIL);
        }
        assertThat(production
                        .handleError(
                                context(TOPICS.passages().name(), null, null),
                                understanding,
                                new TimeoutException("broker away"))
                        .result())
                .isEqualTo(ProductionExceptionHandler.Result.RETRY);
    }
}
