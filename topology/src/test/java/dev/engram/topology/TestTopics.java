package dev.engram.topology;

import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/** A test driver's ends of Engram's topics, with the serdes the topics declare. */
public final class TestTopics {

    private TestTopics() {}

    public static <K, V> TestInputTopic<K, V> input(TopologyTestDriver driver, Topic<K, V> topic) {
        return driver.createInputTopic(
                topic.name(), topic.keySerde().serializer(), topic.valueSerde().serializer());
    }

    public static <K, V> TestOutputTopic<K, V> output(TopologyTestDriver driver, Topic<K, V> topic) {
        return driver.createOutputTopic(
                topic.name(),
                topic.keySerde().deserializer(),
                topic.valueSerde().deserializer());
    }
}
