package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * CONSTRUCT: the namespace-owned memory. Adds understood passages with their verified entities and passage↔entity
 * links (entity search, verification and grouping are the {@link EntityResolver}'s), removes retracted passages and
 * every entity no passage mentions any more, tracks each document's status against its manifest, and emits every
 * mutation, versioned per namespace, as a memory change.
 */
public final class ConstructProcessor implements Processor<String, UnderstandingEvent, Void, Emission> {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ConstructProcessor.class);

    private final Meters meters;
    private ProcessorContext<Void, Emission> context;
    private KeyValueStore<String, DocumentRecord> documents;
    private KeyValueStore<String, StoredPassage> passages;
    private KeyValueStore<String, byte[]> vectors;
    private KeyValueStore<String, Embeddings> embeddings;
    private KeyValueStore<String, ReviewItem> reviews;
    private KeyValueStore<String, NamespaceState> namespaces;
    private EntityResolver resolver;
    private Gists gists;

    /** Per-record scratch: the namespace being changed and the changes made so far. */
    private NamespaceState namespace;

    private final List<MemoryChange> pending = new ArrayList<>();

    public ConstructProcessor(Meters meters) {
        this.meters = meters;
    }

    /** The memory step with every store it owns. */
    public static ProcessorSupplier<String, UnderstandingEvent, Void, Emission> supplier(Meters meters) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<String, UnderstandingEvent, Void, Emission> get() {
                return new ConstructProcessor(meters);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                Set<StoreBuilder<?>> out = new LinkedHashSet<>();
                StateStores.MEMORY.forEach(spec -> out.add(spec.builder()));
                return out;
            }
        };
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
        this.documents = context.getStateStore(StateStores.MEMORY_DOCUMENTS.name());
        this.passages = context.getStateStore(StateStores.MEMORY_PASSAGES.name());
        this.vectors = context.getStateStore(StateStores.MEMORY_VECTORS.name());
        this.embeddings = context.getStateStore(StateStores.MEMORY_EMBEDDINGS.name());
        this.reviews = context.getStateStore(StateStores.MEMORY_REVIEWS.name());
        this.namespaces = context.getStateStore(StateStores.MEMORY_NAMESPACES.name());
        this.gists = new Gists(
                context.getStateStore(StateStores.MEMORY_GISTS.name()),
                context.getStateStore(StateStores.MEMORY_THEMES.name()),
                passages,
                vectors,
                embeddings,
                meters);
        this.resolver = new EntityResolver(
                context.getStateStore(StateStores.MEMORY_ENTITIES.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_PASSAGES.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_INDEX.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_PAIRS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_MEMBERS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_VECTORS.name()),
                context.getStateStore(StateStores.MEMORY_ENTITY_OVERRIDES.name()),
                context.getStateStore(StateStores.MEMORY_PASSAGE_ENTITIES.name()),
                passages,
                embeddings,
                meters);
    }

    @Override
    public void process(Record<String, UnderstandingEvent> record) {
        UnderstandingEvent event = record.value();
        if (event instanceof UnderstandingEvent.Command c && c.command() == null) {
            meters.deadLetter("construct", "bad_command");
            byte[] key = record.key() == null ? null : record.key().getBytes(StandardCharsets.UTF_8);
            context.forward(new Record<Void, Emission>(
                    null,
                    DeadLetters.of(
                            context, DeadLetter.Stage.CONSTRUCT, "memory command rejected: " + c.error(), key, c.raw()),
                    record.timestamp(),
                    record.headers()));
            return;
        }
        String ns = event.namespace();
        namespace = namespaces.get(ns);
        if (namespace == null) {
            namespace = NamespaceState.empty(ns);
        }
        pending.clear();
        try {
            resolver.begin(ns, resolverSink);
            switch (event) {
                case UnderstandingEvent.Understood u -> addPassage(u);
                case UnderstandingEvent.Retracted r -> removePassage(r.retraction());
                case UnderstandingEvent.Manifest m -> applyManifest(m);
                case UnderstandingEvent.Command c -> resolver.command(c.command());
            }
            resolver.resolve();
            if (Gists.themesDue(namespace.changesSinceThemes(), namespace.passages())) {
                try {
                    gists.recomputeThemes(ns, namespace.version(), now());
                } catch (RuntimeException e) {
                    // Themes are derived: a failure keeps the previous ones and never holds up the record.
                    LOG.warn("eigen-themes of namespace {} not recomputed: {}", ns, e.toString());
                    meters.themeSummary("failed");
                }
                namespace = namespace.themeChanges(true, 0);
            }
        } catch (StreamsException e) {
            throw e;
        } catch (RuntimeException e) {
            // A bug or a corrupt input must not stop the namespace: dead-letter it with the reason.
            meters.deadLetter("construct", "error");
            byte[] key = record.key() == null ? null : record.key().getBytes(StandardCharsets.UTF_8);
            context.forward(new Record<Void, Emission>(
                    null,
                    DeadLetters.of(
                            context,
                            DeadLetter.Stage.CONSTRUCT,
                            "memory update failed: " + e,
                            key,
                            Json.toBytes(event)),
                    record.timestamp(),
                    record.headers()));
            return;
        }
        RecordMetadata meta = context.recordMetadata().orElse(null);
        namespace = namespace.at(
                meta == null ? namespace.inputPartition() : meta.partition(),
                meta == null ? namespace.inputOffset() : meta.offset(),
                now());
        namespaces.put(ns, namespace);
        for (MemoryChange change : pending) {
            context.forward(new Record<Void, Emission>(null, new Emission.Change(change), record.timestamp()));
        }
    }

    private void addPassage(UnderstandingEvent.Understood u) {
        PassageEvent.Upsert p = u.passage();
        String ns = p.namespace();
        String docKey = Keys.of(ns, p.documentId());
        DocumentRecord doc = documents.get(docKey);
        if (doc != null && doc.version() > p.documentVersion() && !inManifest(doc, p.passageId())) {
            meters.stale("passage");
            return;
        }
        String passageKey = Keys.of(ns, p.passageId());
        StoredPassage previous = passages.get(passageKey);
        if (previous != null) {
            unlinkEntities(previous);
        }
        clearReviews(ns, p.passageId());
        Extraction proposed = u.understanding().extraction();
        Verifier.Verified verified = Verifier.verify(p.text(), proposed);
        Extraction extraction = kept(proposed, verified);
        Embeddings vectorsOf = kept(u.understanding().embeddings(), verified);
        for (int i = 0; i < verified.rejections().size(); i++) {
            Verifier.Rejection r = verified.rejections().get(i);
            reviews.put(
                    Keys.of(ns, p.passageId(), String.format(java.util.Locale.ROOT, "%05d", i)),
                    new ReviewItem(
                            ns,
                            p.passageId(),
                            p.documentId(),
                            r.kind(),
                            r.subject(),
                            r.reason(),
                            proposed.extractor(),
                            now()));
            meters.rejected(r.kind());
        }
        List<String> entityIds = resolver.link(p.passageId(), p.documentId(), extraction, vectorsOf.entities());
        for (String entityId : entityIds) {
            change(new MemoryChange.LinkAdded(ns, nextVersion(), now(), p.passageId(), entityId));
        }
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
                u.understanding().embedder());
        passages.put(passageKey, stored);
        vectors.put(
                passageKey, VectorCodec.toBytes(u.understanding().embeddings().passage()));
        embeddings.put(passageKey, vectorsOf);
        gists.added(stored, now());
        namespace = namespace.themeChanges(false, 1);
        if (previous == null) {
            namespace = withCounts(0, 1);
        }
        change(new MemoryChange.PassageAdded(ns, nextVersion(), now(), p.documentId(), p.passageId(), p.contentHash()));
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
                    now());
            documents.put(docKey, doc);
            namespace = withCounts(1, 0).statusChanged(null, DocumentStatus.READING);
            change(new MemoryChange.DocumentStatusChanged(
                    ns, nextVersion(), now(), p.documentId(), doc.version(), DocumentStatus.READING));
        } else if (previous == null && inManifest(doc, p.passageId())) {
            updateStatus(doc, doc.present() + 1);
        }
    }

    private void removePassage(PassageEvent.Retraction r) {
        if (forget(r.namespace(), r.documentId(), r.passageId())) {
            DocumentRecord doc = documents.get(Keys.of(r.namespace(), r.documentId()));
            if (doc != null && inManifest(doc, r.passageId())) {
                updateStatus(doc, doc.present() - 1);
            }
        }
    }

    /** Removes a passage, its vector and its links; false when it was not in memory. */
    private boolean forget(String ns, String documentId, String passageId) {
        String passageKey = Keys.of(ns, passageId);
        StoredPassage stored = passages.get(passageKey);
        if (stored == null) {
            return false; // never understood (dead-lettered) or already removed: nothing to retract
        }
        unlinkEntities(stored);
        passages.delete(passageKey);
        vectors.delete(passageKey);
        embeddings.delete(passageKey);
        clearReviews(ns, passageId);
        gists.removed(ns, documentId, passageId, now());
        namespace = withCounts(0, -1).themeChanges(false, 1);
        change(new MemoryChange.PassageRemoved(ns, nextVersion(), now(), documentId, passageId));
        return true;
    }

    /** Removes the passage's links; entity resolution removes every entity left without passages. */
    private void unlinkEntities(StoredPassage passage) {
        resolver.unlink(passage.passageId(), passage.entityIds());
    }

    private void applyManifest(UnderstandingEvent.Manifest m) {
        String docKey = Keys.of(m.namespace(), m.documentId());
        DocumentRecord doc = documents.get(docKey);
        if (doc != null && doc.version() > m.documentVersion()) {
            meters.stale("manifest");
            return;
        }
        if (doc == null) {
            namespace = withCounts(1, 0);
        } else if (doc.status() == DocumentStatus.ARCHIVED && m.op() == DocumentEvent.Op.UPSERT) {
            namespace = withCounts(1, 0);
        } else if (doc.status() != DocumentStatus.ARCHIVED && m.op() == DocumentEvent.Op.DELETE) {
            namespace = withCounts(-1, 0);
        }
        if (doc != null) {
            // The manifest is the whole truth about the document: passages of the previous version that it no
            // longer lists leave memory now, so the new status never shows a mix of versions. Their retraction
            // events, which travel through the understand step, then find nothing left to do.
            Set<String> kept = new HashSet<>();
            m.passages().forEach(ref -> kept.add(ref.passageId()));
            for (PassageRef ref : doc.passages()) {
                if (!kept.contains(ref.passageId())) {
                    forget(m.namespace(), m.documentId(), ref.passageId());
                }
            }
        }
        int present = 0;
        for (PassageRef ref : m.passages()) {
            StoredPassage p = passages.get(Keys.of(m.namespace(), ref.passageId()));
            if (p != null && p.contentHash().equals(ref.contentHash())) {
                present++;
            }
        }
        DocumentStatus status = m.op() == DocumentEvent.Op.DELETE
                ? DocumentStatus.ARCHIVED
                : statusOf(present, m.passages().size());
        documents.put(
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
                        now()));
        if (doc == null || doc.status() != status) {
            namespace = namespace.statusChanged(doc == null ? null : doc.status(), status);
        }
        if (doc == null || doc.status() != status || doc.version() != m.documentVersion()) {
            change(new MemoryChange.DocumentStatusChanged(
                    m.namespace(), nextVersion(), now(), m.documentId(), m.documentVersion(), status));
        }
    }

    /** PENDING: none of the manifest's passages are in memory yet; READING: some are; VERIFIED: all are. */
    private static DocumentStatus statusOf(int present, int expected) {
        if (present >= expected) {
            return DocumentStatus.VERIFIED;
        }
        return present == 0 ? DocumentStatus.PENDING : DocumentStatus.READING;
    }

    private void updateStatus(DocumentRecord doc, int present) {
        if (doc.status() == DocumentStatus.ARCHIVED) {
            return;
        }
        DocumentStatus status = doc.passages().isEmpty()
                ? doc.status()
                : statusOf(present, doc.passages().size());
        documents.put(
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
                        now()));
        if (status != doc.status()) {
            namespace = namespace.statusChanged(doc.status(), status);
            change(new MemoryChange.DocumentStatusChanged(
                    doc.namespace(), nextVersion(), now(), doc.id(), doc.version(), status));
        }
    }

    private void clearReviews(String ns, String passageId) {
        List<String> keys = new ArrayList<>();
        try (var it = reviews.prefixScan(
                Keys.prefix(ns, passageId), new org.apache.kafka.common.serialization.StringSerializer())) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(reviews::delete);
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
                x.usage());
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

    private long nextVersion() {
        namespace = namespace.nextVersion();
        return namespace.version();
    }

    private NamespaceState withCounts(long documentsDelta, long passagesDelta) {
        return namespace.plus(documentsDelta, passagesDelta, 0, 0);
    }

    private final EntityResolver.Sink resolverSink = new EntityResolver.Sink() {
        @Override
        public long nextVersion() {
            return ConstructProcessor.this.nextVersion();
        }

        @Override
        public void change(MemoryChange change) {
            ConstructProcessor.this.change(change);
        }

        @Override
        public void counts(long resolvedDelta, long surfacesDelta) {
            namespace = namespace.plus(0, 0, resolvedDelta, surfacesDelta);
        }

        @Override
        public Instant now() {
            return ConstructProcessor.this.now();
        }
    };

    private void change(MemoryChange change) {
        pending.add(change);
        meters.memoryChange(typeOf(change));
    }

    static String typeOf(MemoryChange change) {
        return switch (change) {
            case MemoryChange.PassageAdded c -> "passage_added";
            case MemoryChange.PassageRemoved c -> "passage_removed";
            case MemoryChange.EntityCreated c -> "entity_created";
            case MemoryChange.EntityRemoved c -> "entity_removed";
            case MemoryChange.LinkAdded c -> "link_added";
            case MemoryChange.LinkRemoved c -> "link_removed";
            case MemoryChange.DocumentStatusChanged c -> "document_status";
            case MemoryChange.EntityDecision c -> "entity_decision";
        };
    }

    private Instant now() {
        return Instant.ofEpochMilli(context.currentSystemTimeMs());
    }
}
