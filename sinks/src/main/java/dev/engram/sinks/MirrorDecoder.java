package dev.engram.sinks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorRecord;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Decodes and validates polled mirror records on a thread of its own, while the sink thread writes the ones before
 * them; a record that is no mirror record is kept with the reason, for the dead-letter topic.
 */
final class MirrorDecoder {

    /** The fields of an object that hold its vectors (see the mirror schema). */
    private static final List<String> VECTOR_FIELDS = List.of("vector", "memory_vector");

    /** A polled batch of one partition, and its decoding. */
    record Batch(
            long seq, TopicPartition tp, List<ConsumerRecord<String, byte[]>> records, Future<List<Decoded>> decoding) {

        /** Waits for the batch's decoding. */
        List<Decoded> decoded() {
            try {
                return decoding.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Retries.Paused(e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("decoding failed", e.getCause());
            }
        }
    }

    /** A polled record and what it holds: a mirror record, or why it is not one. */
    record Decoded(ConsumerRecord<String, byte[]> source, MirrorRecord record, String error) {}

    /** Decodes (and validates) polled records while the sink thread writes the ones before them. */
    private final ExecutorService decoder = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "engram-mirror-decode");
        t.setDaemon(true);
        return t;
    });

    /** A batch of partition {@code tp} from poll {@code seq}, whose records start decoding on the decoding thread. */
    Batch submit(long seq, TopicPartition tp, List<ConsumerRecord<String, byte[]>> batch, boolean withVectors) {
        return new Batch(seq, tp, batch, decoder.submit(() -> decodeAll(batch, withVectors)));
    }

    /** Stops the decoding thread. */
    void shutdownNow() {
        decoder.shutdownNow();
    }

    private static List<Decoded> decodeAll(List<ConsumerRecord<String, byte[]>> batch, boolean withVectors) {
        List<Decoded> out = new ArrayList<>(batch.size());
        for (ConsumerRecord<String, byte[]> r : batch) {
            out.add(decode(r, withVectors));
        }
        return out;
    }

    /**
     * Decodes and validates one record; runs on the decoding thread. Without a vector mirror an object's vectors are
     * checked by the schema (a string or null: their base64 is not) but not decoded, as nothing would read them.
     */
    private static Decoded decode(ConsumerRecord<String, byte[]> r, boolean withVectors) {
        try {
            if (r.value() == null) {
                throw new IllegalArgumentException("null value");
            }
            JsonNode tree = Json.strictTrees().readTree(r.value());
            if (tree == null || !tree.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            if (!withVectors && tree.get("object") instanceof ObjectNode object) {
                for (String field : VECTOR_FIELDS) {
                    // not decoded, as nothing would read them; what they hold must still be a vector's text or null
                    JsonNode v = object.get(field);
                    if (v != null && !v.isTextual() && !v.isNull()) {
                        throw new IllegalArgumentException("'" + field + "' is neither base64 text nor null");
                    }
                    if (v != null) {
                        object.putNull(field);
                    }
                }
            }
            return new Decoded(r, Json.bindInternal(tree, MirrorRecord.class), null);
        } catch (IOException e) {
            return new Decoded(r, null, "not a mirror record: " + Json.problem(e));
        } catch (RuntimeException e) {
            return new Decoded(r, null, "not a mirror record: " + e.getMessage());
        }
    }
}
