package dev.engram.bench;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Records when each consumer group's consumer first got records, by group id. Public, as Kafka makes its interceptors
 * by reflection.
 */
public final class FirstRecords implements ConsumerInterceptor<String, byte[]> {
    static final Map<String, Long> AT = new ConcurrentHashMap<>();
    private String group = "";

    @Override
    public void configure(Map<String, ?> configs) {
        group = String.valueOf(configs.get(ConsumerConfig.GROUP_ID_CONFIG));
    }

    @Override
    public ConsumerRecords<String, byte[]> onConsume(ConsumerRecords<String, byte[]> records) {
        if (!records.isEmpty()) {
            AT.putIfAbsent(group, System.nanoTime());
        }
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

    @Override
    public void close() {}
}
