package dev.engram.service.app;

import dev.engram.metrics.Meters;
import dev.engram.stores.BoundedRocksDbConfig;
import dev.engram.topology.StreamErrors;
import dev.engram.topology.Topic;
import dev.engram.topology.Topics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.streams.StreamsConfig;

/** What an instance sets up on Kafka: its Streams applications' properties, and the topics, checked or created. */
public final class KafkaSetup {

    private KafkaSetup() {}

    static Properties streamsProperties(EngramConfig config, String applicationId, int threads) {
        return streamsProperties(config, applicationId, threads, null, null);
    }

    /** With {@code topics} and {@code meters}, also the handlers that dead-letter what escapes the processors. */
    static Properties streamsProperties(
            EngramConfig config, String applicationId, int threads, Topics topics, Meters meters) {
        Properties p = new Properties();
        if (topics != null) {
            StreamErrors.configure(p, topics, meters);
        }
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.kafka().bootstrapServers());
        p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, config.http().applicationServer());
        p.put(
                StreamsConfig.STATE_DIR_CONFIG,
                config.storage().stateDir().toAbsolutePath().toString());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        // warm copies of the stores on other instances, so one takes over a failed instance's namespaces at once
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, config.kafka().standbyReplicas());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, config.kafka().commitIntervalMs());
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) config.kafka().replicationFactor());
        p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedRocksDbConfig.class);
        p.put(BoundedRocksDbConfig.MEMORY_BYTES_CONFIG, config.storage().rocksDbMemoryBytes());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 16L << 20);
        p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), EngramService.MAX_RECORD_BYTES);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 100);
        p.put(
                StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG),
                EngramService.MAX_RECORD_BYTES);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        if (config.kafka().instanceId() != null) {
            // static membership (Streams adds each thread's index): a restart, even after a crash, resumes at once
            p.put(
                    StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
                    config.kafka().instanceId());
        }
        // ENGRAM_KAFKA_* settings apply to every client of both applications, over the defaults above
        p.putAll(config.kafka().clientProperties());
        return p;
    }

    /** Creates Engram's topics when missing; existing topics are left as they are. */
    public static void createTopics(EngramConfig config, Topics topics) {
        try (Admin client = Admin.create(config.kafka().clientConfig())) {
            List<NewTopic> wanted = new ArrayList<>();
            for (Topic<?, ?> topic : topics.all()) {
                String name = topic.name();
                NewTopic t = new NewTopic(
                        name, config.kafka().partitions(), config.kafka().replicationFactor());
                Map<String, String> configs = new LinkedHashMap<>();
                configs.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(EngramService.MAX_RECORD_BYTES));
                if (name.equals(topics.extractions().name())) {
                    configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
                }
                t.configs(configs);
                wanted.add(t);
            }
            for (var e : client.createTopics(wanted).values().entrySet()) {
                try {
                    e.getValue().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException ex) {
                    if (!(ex.getCause() instanceof TopicExistsException)) {
                        throw new IllegalStateException("cannot create topic " + e.getKey() + ": " + ex.getCause(), ex);
                    }
                }
            }
            checkPartitions(client, config, topics);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot describe Engram's topics: " + e.getCause(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "timed out creating topics at " + config.kafka().bootstrapServers(), e);
        }
    }

    /**
     * Refuses to start when a topic keyed by namespace has another partition count than {@code ENGRAM_PARTITIONS}: a
     * namespace's memory lives on the partition its name hashes to, so every such topic must hash it alike (a command
     * or a mirror's report on another partition than the namespace's understandings would never reach its memory),
     * and their count cannot change under a memory that exists. Topics made earlier with another count are kept, so
     * the fix is to say that count.
     */
    static void checkPartitions(Admin client, EngramConfig config, Topics topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        List<String> keyedByNamespace = List.of(
                topics.understandings().name(),
                topics.memoryCommands().name(),
                topics.compensations().name(),
                topics.memoryChanges().name(),
                topics.mirror().name());
        Map<String, TopicDescription> described = null;
        for (int attempt = 0; described == null; attempt++) {
            try {
                described =
                        client.describeTopics(keyedByNamespace).allTopicNames().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                // topics made a moment ago: a broker whose metadata lags may not know them yet
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || attempt >= 20) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(250);
            }
        }
        List<String> wrong = new ArrayList<>();
        Set<Integer> counts = new TreeSet<>();
        for (String name : keyedByNamespace) {
            int n = described.get(name).partitions().size();
            counts.add(n);
            if (n != config.kafka().partitions()) {
                wrong.add(name + " has " + n);
            }
        }
        if (wrong.isEmpty()) {
            return;
        }
        String fix = counts.size() == 1
                ? "set ENGRAM_PARTITIONS=" + counts.iterator().next() + " (the count the topics were made with)"
                : "the topics disagree among themselves: start memory afresh (docs/topics.md, a documents topic made"
                        + " anew) with ENGRAM_PARTITIONS=" + config.kafka().partitions();
        throw new IllegalStateException("topics keyed by namespace must have ENGRAM_PARTITIONS="
                + config.kafka().partitions() + " partitions, but " + String.join(", ", wrong)
                + ": a namespace's memory lives on the partition its name hashes to; " + fix);
    }
}
