package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What understood passages, retractions and manifests do to a namespace's memory, staged in the record's
 * {@link MemoryTransaction}: a passage enters with what verification kept of its extraction (the rest goes to review)
 * and its vectors, or leaves with its links, and each document's record and status follow its manifest.
 */
final class DocumentUpdates {

    private final Meters meters;

    DocumentUpdates(Meters meters) {
        this.meters = meters;
    }

    /** Adds an understood passage, unless its document has moved on to a version whose manifest omits it. */
    void addPassage(MemoryTransaction tx, EntityResolver entities, UnderstandingEvent.Understood u) {
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

    /** Removes a retracted passage, and counts it out of its document's status. */
    void removePassage(MemoryTransaction tx, EntityResolver entities, PassageEvent.Retraction r) {
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

    /** Makes a document what its manifest says, unless the document is at a later version already. */
    void applyManifest(MemoryTransaction tx, EntityResolver entities, UnderstandingEvent.Manifest m) {
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
}
