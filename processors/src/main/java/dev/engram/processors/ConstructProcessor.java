package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.stores.Keys;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.StoreBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CONSTRUCT: the namespace-owned memory. Adds understood passages with their verified entities and passage↔entity
 * links (entity search, verification and grouping are the {@link EntityResolver}'s), removes retracted passages and
 * every entity no passage mentions any more, tracks each document's status against its manifest, and emits every
 * mutation, versioned per namespace, as a memory change.
 *
 * <p>Each record is one {@link MemoryTransaction}: its writes, counters and changes reach the stores and the
 * memory-changes topic only when the whole record succeeded. A record that fails leaves no trace but its dead letter.
 */
public final class ConstructProcessor implements Processor<String, UnderstandingEvent, Void, Emission> {

    private static final Logger LOG = LoggerFactory.getLogger(ConstructProcessor.class);

    /** A failure injected into the memory step once a record's changes are made, for tests; none in production. */
    interface Fault {
        Fault NONE = (tx, event) -> {};

        void afterChanges(MemoryTransaction tx, UnderstandingEvent event);
    }

    /** How often compensated objects are looked at for a repair, by default. */
    public static final Duration REPAIR_INTERVAL = Duration.ofMinutes(1);
    /** At most this many compensated objects are re-emitted per look. */
    static final int REPAIRS_PER_ROUND = 1000;

    private final Meters meters;
    private final Fault fault;
    private final Duration repairInterval;
    private final int repairsPerRound;
    private final MergeModel model;
    /** Parsed entity names, kept across records. */
    private final PairDecider.Names names = new PairDecider.Names();
    /** Passages, retractions and manifests applied to memory. */
    private final DocumentUpdates documents;

    private ProcessorContext<Void, Emission> context;
    private MemoryStores stores;
    private DeadLetters letters;
    private Tally tally;
    /** The last compensated object a repair round re-emitted: the next round starts after it. */
    private String repairCursor;
    /** Who this task is, in the gauge of rejected objects. */
    private String owner;

    ConstructProcessor(Meters meters, Fault fault, Duration repairInterval, int repairsPerRound, MergeModel model) {
        this.meters = meters;
        this.fault = fault;
        this.repairInterval = repairInterval;
        this.repairsPerRound = repairsPerRound;
        this.model = model;
        this.documents = new DocumentUpdates(meters);
    }

    /**
     * The memory step with every store it owns, its entity resolution merging by {@code model}, re-emitting objects a
     * mirror rejected every {@code repairInterval} (with backoff).
     */
    public static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(
            Meters meters, Duration repairInterval, MergeModel model) {
        return supplier(meters, Fault.NONE, repairInterval, REPAIRS_PER_ROUND, model);
    }

    static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(Meters meters, Fault fault) {
        return supplier(meters, fault, REPAIR_INTERVAL, REPAIRS_PER_ROUND);
    }

    static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(
            Meters meters, Fault fault, Duration repairInterval, int repairsPerRound) {
        return supplier(meters, fault, repairInterval, repairsPerRound, MergeModel.shipped());
    }

    static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(
            Meters meters, Fault fault, Duration repairInterval, int repairsPerRound, MergeModel model) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, UnderstandingEvent, Void, Emission> get() {
                return new ConstructProcessor(meters, fault, repairInterval, repairsPerRound, model);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                Set<StoreBuilder<?>> out = new LinkedHashSet<>();
                StateStores.MEMORY.forEach(spec -> out.add(spec.builder()));
                out.add(StateStores.MEMORY_TALLY.builder());
                return out;
            }
        };
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
        this.stores = MemoryStores.open(context);
        this.tally = new Tally(context, StateStores.MEMORY_TALLY, meters);
        this.letters = new DeadLetters(
                context,
                DeadLetter.Stage.CONSTRUCT,
                tally,
                e -> new DeadLetters.Failure(DeadLetter.Cause.ERROR, "memory update failed: " + e));
        this.owner = context.applicationId() + "/" + context.taskId();
        context.schedule(repairInterval, PunctuationType.WALL_CLOCK_TIME, this::repairCompensated);
    }

    /**
     * The repair loop: re-emits objects a mirror rejected, each after its backoff, so that they reach the mirrors once
     * the cause is fixed (a mirror answers each with {@code repaired} or another compensation). Each round looks at
     * every rejected object of the task, counts them by namespace for the gauge, and re-emits at most
     * {@code repairsPerRound} of those that are due, starting after the last one the round before re-emitted: a
     * namespace whose objects a mirror rejects forever, due or not, never holds up the objects that sort after it.
     */
    private void repairCompensated(long timestamp) {
        Instant now = now();
        Map<String, Long> rejected = new TreeMap<>();
        List<String> afterCursor = new ArrayList<>();
        List<String> upToCursor = new ArrayList<>();
        try (KeyValueIterator<String, MirrorEntry> it = stores.compensated().all()) {
            while (it.hasNext()) {
                KeyValue<String, MirrorEntry> kv = it.next();
                int end = kv.key.indexOf(Keys.SEPARATOR);
                rejected.merge(end < 0 ? kv.key : kv.key.substring(0, end), 1L, Long::sum);
                List<String> into =
                        repairCursor == null || kv.key.compareTo(repairCursor) > 0 ? afterCursor : upToCursor;
                if (into.size() < repairsPerRound && MirrorFeedbacks.due(kv.value, repairInterval, now)) {
                    into.add(kv.key);
                }
            }
        }
        meters.mirrorRejected(owner, rejected);
        List<String> keys = new ArrayList<>(afterCursor);
        keys.addAll(upToCursor);
        if (keys.size() > repairsPerRound) {
            keys = keys.subList(0, repairsPerRound);
        }
        for (String key : keys) {
            repairCursor = key;
            String[] parts = key.split(String.valueOf(Keys.SEPARATOR), 3);
            MemoryTransaction tx = MemoryTransaction.open(stores, parts[0], this::now);
            List<MirrorRecord> out;
            try {
                out = MirrorFeedbacks.repair(tx, kindOf(parts[1]), parts[2], repairInterval);
            } catch (StreamsException e) {
                throw e;
            } catch (RuntimeException e) {
                // one entry that cannot be repaired must not stop the loop for the others: it is dropped and said
                tx.abort();
                LOG.error(
                        "compensated entry {} cannot be repaired and is dropped", key.replace(Keys.SEPARATOR, '/'), e);
                stores.compensated().delete(key);
                continue;
            }
            if (out.isEmpty() && tx.compensated().isEmpty() && tx.mirror().isEmpty()) {
                tx.abort(); // nothing due: nothing written
                continue;
            }
            tx.commit();
            for (MirrorRecord m : out) {
                meters.mirrorRecord(Meters.MirrorOp.REPAIR);
                context.forward(new Record<Void, Emission>(null, new Emission.Mirrored(m), timestamp));
            }
        }
    }

    @Override
    public void close() {
        if (owner != null) {
            meters.mirrorRejected(owner, Map.of());
        }
        if (tally != null) {
            tally.close();
        }
    }

    /** The record as it was read: a command's or a report's own bytes, an understanding as JSON. */
    private static byte[] original(UnderstandingEvent event) {
        if (event instanceof UnderstandingEvent.Command c && c.raw() != null) {
            return c.raw();
        }
        if (event instanceof UnderstandingEvent.MirrorFeedback f && f.raw() != null) {
            return f.raw();
        }
        return Json.toBytes(event);
    }

    private static String abbreviated(String key) {
        return key == null ? "null" : key.length() > 200 ? key.substring(0, 200) + "…" : key;
    }

    private static MirrorRecord.Kind kindOf(String wireName) {
        return MirrorRecord.Kind.valueOf(wireName.toUpperCase(Locale.ROOT));
    }

    @Override
    public void process(Record<String, UnderstandingEvent> record) {
        UnderstandingEvent event = record.value();
        byte[] key = DeadLetters.utf8(record.key());
        if (event == null) {
            letters.reject(
                    record,
                    DeadLetter.Cause.UNDECODABLE,
                    "null value: no step writes one (an understanding, a retraction, a command or a compensation)",
                    key,
                    null);
            return;
        }
        if (event instanceof UnderstandingEvent.Command c && c.command() == null) {
            letters.reject(record, DeadLetter.Cause.BAD_COMMAND, "memory command rejected: " + c.error(), key, c.raw());
            return;
        }
        if (event instanceof UnderstandingEvent.MirrorFeedback f && f.compensation() == null) {
            letters.reject(
                    record, DeadLetter.Cause.BAD_COMPENSATION, "compensation rejected: " + f.error(), key, f.raw());
            return;
        }
        if (!event.namespace().equals(record.key())) {
            // A namespace's memory lives on the partition its name hashes to: a record keyed otherwise (a command or
            // a report written by hand, say) would write it on another partition, where its queries never look.
            letters.reject(
                    record,
                    DeadLetter.Cause.KEY_MISMATCH,
                    "the record's key '" + abbreviated(record.key()) + "' is not the namespace it names, '"
                            + event.namespace() + "'",
                    key,
                    original(event));
            return;
        }
        MemoryTransaction tx = MemoryTransaction.open(stores, event.namespace(), this::now);
        List<MirrorRecord> mirrored = new ArrayList<>();
        // A bug or a corrupt input must not stop the namespace: it is dead-lettered, and its writes are forgotten.
        boolean applied = letters.guard(record, key, () -> Json.toBytes(event), () -> {
            if (event instanceof UnderstandingEvent.MirrorFeedback f) {
                mirrored.addAll(MirrorFeedbacks.apply(tx, f.compensation()));
            } else {
                apply(tx, event);
                mirrored.addAll(Mirror.stage(tx));
            }
            RecordMetadata meta = context.recordMetadata().orElse(null);
            tx.update(s -> s.at(
                    meta == null ? s.inputPartition() : meta.partition(),
                    meta == null ? s.inputOffset() : meta.offset(),
                    now()));
        });
        if (!applied) {
            tx.abort();
            return;
        }
        List<MemoryChange> committed;
        try {
            committed = tx.commit();
        } catch (StreamsException e) {
            throw e;
        } catch (RuntimeException e) {
            // Writing part of a record and dead-lettering it would leave memory half-changed: fail the task instead,
            // so that exactly-once rolls back what was written and the record is tried again.
            throw new StreamsException("committing the memory update of namespace " + tx.namespace() + " failed", e);
        }
        for (MemoryChange change : committed) {
            meters.memoryChange(MemoryChange.Type.of(change));
            if (change instanceof MemoryChange.EntityDecision d) {
                meters.resolution(d.decision());
            }
            context.forward(new Record<Void, Emission>(null, new Emission.Change(change), record.timestamp()));
        }
        for (MirrorRecord m : mirrored) {
            meters.mirrorRecord(
                    m.repair()
                            ? Meters.MirrorOp.REPAIR
                            : m.deleted() ? Meters.MirrorOp.DELETE : Meters.MirrorOp.UPSERT);
            context.forward(new Record<Void, Emission>(null, new Emission.Mirrored(m), record.timestamp()));
        }
    }

    /** Everything one record does to memory, staged in its transaction. */
    private void apply(MemoryTransaction tx, UnderstandingEvent event) {
        EntityResolver entities = new EntityResolver(tx, meters, names, model);
        switch (event) {
            case UnderstandingEvent.Understood u -> documents.addPassage(tx, entities, u);
            case UnderstandingEvent.Retracted r -> documents.removePassage(tx, entities, r.retraction());
            case UnderstandingEvent.Manifest m -> documents.applyManifest(tx, entities, m);
            case UnderstandingEvent.Command c -> entities.command(c.command());
            case UnderstandingEvent.MirrorFeedback f -> throw new IllegalStateException("mirror feedback is no update");
        }
        entities.resolve();
        if (event instanceof UnderstandingEvent.Understood u) {
            // the agent's claims, once resolution has decided, for a passage that entered memory
            StoredPassage stored = tx.passages()
                    .get(Keys.of(u.passage().namespace(), u.passage().passageId()));
            if (stored != null && stored.contentHash().equals(u.passage().contentHash())) {
                Claims.review(tx, u.passage(), u.understanding().extraction());
            }
        }
        fault.afterChanges(tx, event);
        if (Gists.themesDue(tx.state().changesSinceThemes(), tx.state().passages())) {
            try {
                Gists.recomputeThemes(tx);
            } catch (StreamsException e) {
                throw e;
            } catch (RuntimeException e) {
                // Themes are derived: a failure keeps the previous ones and never holds up the record.
                LOG.warn("eigen-themes of namespace {} not recomputed: {}", tx.namespace(), e.toString());
                tx.onCommit(() -> meters.themeSummary(Meters.ThemeSummaryKind.FAILED));
            }
            tx.update(s -> s.themeChanges(true, 0));
        }
    }

    private Instant now() {
        return Instant.ofEpochMilli(context.currentSystemTimeMs());
    }
}
