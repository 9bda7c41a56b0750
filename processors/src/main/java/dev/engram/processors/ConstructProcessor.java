package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
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
    /** Parsed entity names, kept across records. */
    private final PairDecider.Names names = new PairDecider.Names();

    private ProcessorContext<Void, Emission> context;
    private MemoryStores stores;
    private DeadLetters letters;
    private Tally tally;
    /** The last compensated object a repair round re-emitted: the next round starts after it. */
    private String repairCursor;
    /** Who this task is, in the gauge of rejected objects. */
    private String owner;

    public ConstructProcessor(Meters meters) {
        this(meters, Fault.NONE, REPAIR_INTERVAL);
    }

    ConstructProcessor(Meters meters, Fault fault, Duration repairInterval) {
        this(meters, fault, repairInterval, REPAIRS_PER_ROUND);
    }

    ConstructProcessor(Meters meters, Fault fault, Duration repairInterval, int repairsPerRound) {
        this.meters = meters;
        this.fault = fault;
        this.repairInterval = repairInterval;
        this.repairsPerRound = repairsPerRound;
    }

    /** The memory step with every store it owns. */
    public static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(Meters meters) {
        return supplier(meters, Fault.NONE, REPAIR_INTERVAL);
    }

    /** The memory step, re-emitting objects a mirror rejected every {@code repairInterval} (with backoff). */
    public static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(
            Meters meters, Duration repairInterval) {
        return supplier(meters, Fault.NONE, repairInterval);
    }

    static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(Meters meters, Fault fault) {
        return supplier(meters, fault, REPAIR_INTERVAL);
    }

    static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(
            Meters meters, Fault fault, Duration repairInterval) {
        return supplier(meters, fault, repairInterval, REPAIRS_PER_ROUND);
    }

    static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(
            Meters meters, Fault fault, Duration repairInterval, int repairsPerRound) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, UnderstandingEvent, Void, Emission> get() {
                return new ConstructProcessor(meters, fault, repairInterval, repairsPerRound);
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
        EntityResolver entities = new EntityResolver(tx, meters, names);
        switch (event) {
            case UnderstandingEvent.Understood u -> addPassage(tx, entities, u);
            case UnderstandingEvent.Retracted r -> removePassage(tx, entities, r.retraction());
            case UnderstandingEvent.Manifest m -> applyManifest(tx, entities, m);
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

    private void addPassage(MemoryTransaction tx, EntityResolver entities, UnderstandingEvent.Understood u) {
        PassageEvent.Upsert p = u.passage();
        String ns = p.namespace();
        String docKey = Keys.of(ns, p.documentId());
        DocumentRecord doc = tx.documents().get(docKey);
        if (doc != null && doc.version() > p.documentVersion() && !inManifest(doc, p.passageId())) {
            tx.onCommit(() -> meters.stale(Meters.StaleKind.PASSAGE));
            return;
        }
        String passageKey = Keys.of(ns, p.passageId());
        StoredPassage previous = tx.passages().get(passageKey);
        if (previous != null) {
            entities.unlink(previous.passageId(), previous.entityIds());
        }
        clearReviews(tx, ns, p.passageId());
        Extraction proposed = u.understanding().extraction();
        Verifier.Verified verified = Verifier.verify(p.text(), proposed, Verifier.Circumstances.of(p));
        Extraction extraction = kept(proposed, verified);
        // at the precision they are stored in, so that every use sees what a later read of the stores will
        Embeddings rounded = StoredVectors.round(u.understanding().embeddings());
        Embeddings vectorsOf = kept(rounded, verified);
        for (int i = 0; i < verified.rejections().size(); i++) {
            Verifier.Rejection r = verified.rejections().get(i);
            tx.reviews()
                    .put(
                            Keys.of(ns, p.passageId(), String.format(Locale.ROOT, "%05d", i)),
                            new ReviewItem(
                                    ns,
                                    p.passageId(),
                                    p.documentId(),
                                    r.kind().tag(),
                                    r.subject(),
                                    r.reason(),
                                    proposed.extractor(),
                                    tx.now()));
            tx.onCommit(() -> meters.rejected(r.kind()));
        }
        String session = p.conversation() == null ? null : p.conversation().sessionKey();
        List<String> entityIds =
                entities.link(p.passageId(), p.documentId(), session, extraction, vectorsOf.entities());
        StoredPassage stored = new StoredPassage(
                ns,
                p.documentId(),
                p.passageId(),
                p.documentVersion(),
                p.ordinal(),
                p.contentHash(),
                p.title(),
                p.headings(),
                p.text(),
                p.start(),
                p.end(),
                extraction,
                entityIds,
                u.understanding().embedder(),
                p.eventTime(),
                session);
        tx.passages().put(passageKey, stored);
        tx.vectors().put(passageKey, StoredVectors.encode(rounded.passage()));
        tx.embeddings().put(passageKey, vectorsOf);
        Gists.added(tx, stored);
        tx.update(s -> s.themeChanges(false, 1));
        if (previous == null) {
            tx.counts(0, 1, 0, 0);
        }
        tx.change(new MemoryChange.PassageAdded(
                ns, tx.nextVersion(), tx.now(), p.documentId(), p.passageId(), p.contentHash()));
        if (doc == null) {
            // The manifest has not arrived yet: the document is being read.
            doc = new DocumentRecord(
                    ns,
                    p.documentId(),
                    p.documentVersion(),
                    DocumentStatus.READING,
                    p.title(),
                    p.source(),
                    Map.of(),
                    p.eventTime(),
                    List.of(),
                    0,
                    tx.now(),
                    null,
                    List.of());
            tx.documents().put(docKey, doc);
            tx.counts(1, 0, 0, 0);
            tx.update(s -> s.statusChanged(null, DocumentStatus.READING));
            tx.change(new MemoryChange.DocumentStatusChanged(
                    ns, tx.nextVersion(), tx.now(), p.documentId(), doc.version(), DocumentStatus.READING));
        } else if (previous == null && inManifest(doc, p.passageId())) {
            updateStatus(tx, doc, doc.present() + 1);
        }
    }

    private void removePassage(MemoryTransaction tx, EntityResolver entities, PassageEvent.Retraction r) {
        if (forget(tx, entities, r.namespace(), r.documentId(), r.passageId())) {
            DocumentRecord doc = tx.documents().get(Keys.of(r.namespace(), r.documentId()));
            if (doc != null && inManifest(doc, r.passageId())) {
                updateStatus(tx, doc, doc.present() - 1);
            }
        }
    }

    /** Removes a passage, its vector and its links; false when it was not in memory. */
    private boolean forget(
            MemoryTransaction tx, EntityResolver entities, String ns, String documentId, String passageId) {
        String passageKey = Keys.of(ns, passageId);
        StoredPassage stored = tx.passages().get(passageKey);
        if (stored == null) {
            return false; // never understood (dead-lettered) or already removed: nothing to retract
        }
        // Entity resolution removes every entity left without passages.
        entities.unlink(stored.passageId(), stored.entityIds());
        tx.passages().delete(passageKey);
        tx.vectors().delete(passageKey);
        tx.embeddings().delete(passageKey);
        clearReviews(tx, ns, passageId);
        Gists.removed(tx, ns, documentId, passageId);
        Gists.retractFromThemes(tx, passageId);
        tx.counts(0, -1, 0, 0);
        tx.update(s -> s.themeChanges(false, 1));
        tx.change(new MemoryChange.PassageRemoved(ns, tx.nextVersion(), tx.now(), documentId, passageId));
        return true;
    }

    private void applyManifest(MemoryTransaction tx, EntityResolver entities, UnderstandingEvent.Manifest m) {
        String docKey = Keys.of(m.namespace(), m.documentId());
        DocumentRecord doc = tx.documents().get(docKey);
        if (doc != null && doc.version() > m.documentVersion()) {
            tx.onCommit(() -> meters.stale(Meters.StaleKind.MANIFEST));
            return;
        }
        if (doc == null) {
            tx.counts(1, 0, 0, 0);
        } else if (doc.status() == DocumentStatus.ARCHIVED && m.op() == DocumentEvent.Op.UPSERT) {
            tx.counts(1, 0, 0, 0);
        } else if (doc.status() != DocumentStatus.ARCHIVED && m.op() == DocumentEvent.Op.DELETE) {
            tx.counts(-1, 0, 0, 0);
        }
        if (doc != null) {
            // The manifest is the whole truth about the document: passages of the previous version that it no
            // longer lists leave memory now, so the new status never shows a mix of versions. Their retraction
            // events, which travel through the understand step, then find nothing left to do.
            Set<String> kept = new HashSet<>();
            m.passages().forEach(ref -> kept.add(ref.passageId()));
            for (PassageRef ref : doc.passages()) {
                if (!kept.contains(ref.passageId())) {
                    forget(tx, entities, m.namespace(), m.documentId(), ref.passageId());
                }
            }
        }
        int present = 0;
        for (PassageRef ref : m.passages()) {
            StoredPassage p = tx.passages().get(Keys.of(m.namespace(), ref.passageId()));
            if (p != null && p.contentHash().equals(ref.contentHash())) {
                present++;
            }
        }
        DocumentStatus status = m.op() == DocumentEvent.Op.DELETE
                ? DocumentStatus.ARCHIVED
                : statusOf(present, m.passages().size());
        tx.documents()
                .put(
                        docKey,
                        new DocumentRecord(
                                m.namespace(),
                                m.documentId(),
                                m.documentVersion(),
                                status,
                                m.title(),
                                m.source(),
                                m.metadata(),
                                m.eventTime(),
                                m.passages(),
                                present,
                                tx.now(),
                                m.input(),
                                m.notes()));
        if (doc == null || doc.status() != status) {
            DocumentStatus from = doc == null ? null : doc.status();
            tx.update(s -> s.statusChanged(from, status));
        }
        if (doc == null || doc.status() != status || doc.version() != m.documentVersion()) {
            tx.change(new MemoryChange.DocumentStatusChanged(
                    m.namespace(), tx.nextVersion(), tx.now(), m.documentId(), m.documentVersion(), status));
        }
    }

    /** PENDING: none of the manifest's passages are in memory yet; READING: some are; VERIFIED: all are. */
    private static DocumentStatus statusOf(int present, int expected) {
        if (present >= expected) {
            return DocumentStatus.VERIFIED;
        }
        return present == 0 ? DocumentStatus.PENDING : DocumentStatus.READING;
    }

    private static void updateStatus(MemoryTransaction tx, DocumentRecord doc, int present) {
        if (doc.status() == DocumentStatus.ARCHIVED) {
            return;
        }
        DocumentStatus status = doc.passages().isEmpty()
                ? doc.status()
                : statusOf(present, doc.passages().size());
        tx.documents()
                .put(
                        Keys.of(doc.namespace(), doc.id()),
                        new DocumentRecord(
                                doc.namespace(),
                                doc.id(),
                                doc.version(),
                                status,
                                doc.title(),
                                doc.source(),
                                doc.metadata(),
                                doc.eventTime(),
                                doc.passages(),
                                present,
                                tx.now(),
                                doc.input(),
                                doc.notes()));
        if (status != doc.status()) {
            tx.update(s -> s.statusChanged(doc.status(), status));
            tx.change(new MemoryChange.DocumentStatusChanged(
                    doc.namespace(), tx.nextVersion(), tx.now(), doc.id(), doc.version(), status));
        }
    }

    private static void clearReviews(MemoryTransaction tx, String ns, String passageId) {
        tx.reviews().deletePrefix(Keys.prefix(ns, passageId));
    }

    /** The extraction without what verification rejected; relations keep only accepted entities. */
    private static Extraction kept(Extraction x, Verifier.Verified v) {
        List<Extraction.Entity> entities =
                v.entities().stream().map(x.entities()::get).toList();
        Set<String> names = new HashSet<>();
        entities.forEach(e -> {
            names.add(e.name());
            names.addAll(e.aliases());
        });
        List<Extraction.Relation> relations = x.relations().stream()
                .filter(r -> names.containsAll(r.entities()))
                .toList();
        return new Extraction(
                x.memory(),
                entities,
                v.facts().stream().map(x.facts()::get).toList(),
                relations,
                x.questions(),
                x.extractor(),
                x.model(),
                x.usage(),
                x.construction());
    }

    private static Embeddings kept(Embeddings e, Verifier.Verified v) {
        return new Embeddings(
                e.passage(),
                e.memory(),
                v.entities().stream()
                        .filter(i -> i < e.entities().size())
                        .map(e.entities()::get)
                        .toList(),
                v.facts().stream()
                        .filter(i -> i < e.facts().size())
                        .map(e.facts()::get)
                        .toList(),
                e.questions());
    }

    private static boolean inManifest(DocumentRecord doc, String passageId) {
        for (PassageRef ref : doc.passages()) {
            if (ref.passageId().equals(passageId)) {
                return true;
            }
        }
        return false;
    }

    private Instant now() {
        return Instant.ofEpochMilli(context.currentSystemTimeMs());
    }
}
