package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.BlockKeys;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StoredPassage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * SEARCH → VERIFY → CONSTRUCT for entities, within one namespace and one input record at a time.
 *
 * <p>Mentions are grouped into surface entities by normalized name and type (the unit of reference counting). Each
 * surface is indexed under blocking keys — its loose form, declared aliases, acronym and initials, name tokens and
 * locality-sensitive hashes of its "name: description" embedding — so that the candidates for a surface are found by
 * a few prefix scans, never by scanning all entities. Every candidate pair is decided by {@link PairRules} and the
 * decision (merge, review, defer) is stored with its rule, score and evidence. Resolved entities are the groups the
 * merge decisions make, built greedily in score order so that a group never holds two incompatible types, and named
 * by their smallest surface id.
 *
 * <p>Order independence: a pair decision reads only the two surfaces, the blocks the shorter one sits in and their
 * shared context, and all of those are re-decided whenever they change, so the stores end up the same whatever order
 * documents arrive, update and leave in.
 */
final class EntityResolver {

    /** Blocks larger than this do not discriminate and are skipped (and counted). */
    static final int BLOCK_CAP = 64;
    /** Passages of a surface read for its context (documents and co-mentioned entities). */
    static final int CONTEXT_PASSAGES = 32;
    /** The most surfaces one resolved group is rebuilt over at once. */
    static final int COMPONENT_CAP = 512;

    private static final int LSH_BANDS = 4;
    private static final int LSH_BITS = 12;
    private static final StringSerializer KEYS = new StringSerializer();

    /** Where the resolver reports memory changes and count deltas. */
    interface Sink {
        long nextVersion();

        void change(MemoryChange change);

        void counts(long resolvedDelta, long surfacesDelta);

        Instant now();
    }

    private final KeyValueStore<String, EntityRecord> entities;
    private final KeyValueStore<String, MentionRecord> mentions;
    private final KeyValueStore<String, String> index;
    private final KeyValueStore<String, PairDecision> pairs;
    private final KeyValueStore<String, String> members;
    private final KeyValueStore<String, byte[]> entityVectors;
    private final KeyValueStore<String, PairDecision> overrides;
    private final KeyValueStore<String, String> passageEntities;
    private final KeyValueStore<String, StoredPassage> passages;
    private final KeyValueStore<String, Embeddings> embeddings;
    private final Meters meters;

    /** Per record: surfaces whose mentions changed, with their state before the record (null when new). */
    private final Map<String, Optional<EntityRecord>> touched = new TreeMap<>();
    /** Per record: surfaces an operator's command names. */
    private final Set<String> commanded = new TreeSet<>();

    private final Map<String, Context> contexts = new HashMap<>();
    /** Per resolve: surface views, candidate sets and ambiguity counts; memory does not change while deciding. */
    private final Map<String, Optional<PairRules.Surface>> views = new HashMap<>();

    private final Map<String, Set<String>> candidateSets = new HashMap<>();
    private final Map<String, Integer> ambiguities = new HashMap<>();
    /** Parsed names by (normalized, written): pure, so kept across records (bounded). */
    private final Map<String, NameForms.Name> parsedNames = new HashMap<>();

    private Sink sink;
    private String ns;

    EntityResolver(
            KeyValueStore<String, EntityRecord> entities,
            KeyValueStore<String, MentionRecord> mentions,
            KeyValueStore<String, String> index,
            KeyValueStore<String, PairDecision> pairs,
            KeyValueStore<String, String> members,
            KeyValueStore<String, byte[]> entityVectors,
            KeyValueStore<String, PairDecision> overrides,
            KeyValueStore<String, String> passageEntities,
            KeyValueStore<String, StoredPassage> passages,
            KeyValueStore<String, Embeddings> embeddings,
            Meters meters) {
        this.entities = entities;
        this.mentions = mentions;
        this.index = index;
        this.pairs = pairs;
        this.members = members;
        this.entityVectors = entityVectors;
        this.overrides = overrides;
        this.passageEntities = passageEntities;
        this.passages = passages;
        this.embeddings = embeddings;
        this.meters = meters;
    }

    void begin(String namespace, Sink sink) {
        this.ns = namespace;
        this.sink = sink;
        touched.clear();
        commanded.clear();
        contexts.clear();
        views.clear();
        candidateSets.clear();
        ambiguities.clear();
    }

    // ---- mentions ---------------------------------------------------------------------------------------------

    /** Links a passage's accepted entity mentions; returns the surface ids in order of first mention. */
    List<String> link(String passageId, String documentId, Extraction extraction, List<float[]> vectors) {
        Map<String, List<Integer>> bySurface = new LinkedHashMap<>();
        for (int i = 0; i < extraction.entities().size(); i++) {
            Extraction.Entity m = extraction.entities().get(i);
            String normalized = EntityNames.normalize(m.name());
            if (!normalized.isEmpty()) {
                bySurface
                        .computeIfAbsent(EntityNames.surfaceId(ns, m.name(), m.type()), k -> new ArrayList<>())
                        .add(i);
            }
        }
        for (Map.Entry<String, List<Integer>> e : bySurface.entrySet()) {
            String sid = e.getKey();
            Extraction.Entity first = extraction.entities().get(e.getValue().get(0));
            String normalized = EntityNames.normalize(first.name());
            int count = 0;
            Set<String> aliases = new TreeSet<>();
            Map<String, String> aliasForms = new TreeMap<>(); // normalized → first written form
            List<dev.engram.schemas.Span> spans = new ArrayList<>();
            String description = "";
            for (int i : e.getValue()) {
                Extraction.Entity m = extraction.entities().get(i);
                count += Math.max(1, m.spans().size());
                spans.addAll(m.spans());
                for (String written : m.aliases()) {
                    String a = EntityNames.normalize(written);
                    if (!a.isEmpty() && !a.equals(normalized)) {
                        aliases.add(a);
                        aliasForms.putIfAbsent(a, written.strip());
                    }
                }
                if (description.isEmpty()) {
                    description = m.description();
                }
            }
            float[] vector = e.getValue().get(0) < vectors.size()
                    ? vectors.get(e.getValue().get(0))
                    : null;
            EntityRecord before = entities.get(Keys.of(ns, sid));
            remember(sid, before);
            MentionRecord mention = new MentionRecord(
                    count,
                    first.name(),
                    NameForms.typeClass(first.type()),
                    description,
                    List.copyOf(aliases),
                    spans,
                    documentId,
                    extraction.extractor(),
                    before == null ? "create" : "update",
                    sink.now(),
                    List.copyOf(aliasForms.values()));
            mentions.put(Keys.of(ns, sid, passageId), mention);
            EntityRecord after;
            if (before == null) {
                after = new EntityRecord(
                        ns,
                        sid,
                        first.name(),
                        normalized,
                        NameForms.typeClass(first.type()),
                        count,
                        1,
                        Map.of(first.name(), 1),
                        counted(Map.of(), aliases, 1),
                        description,
                        passageId,
                        Lsh.buckets(vector),
                        sid);
                putVector(sid, vector);
                sink.change(new MemoryChange.EntityCreated(
                        ns, sink.nextVersion(), sink.now(), sid, first.name(), after.type()));
                sink.counts(1, 1);
                members.put(Keys.of(ns, sid, sid), normalized);
            } else {
                Map<String, Integer> forms = new HashMap<>(before.forms());
                forms.merge(first.name(), 1, Integer::sum);
                boolean representative = passageId.compareTo(before.representative()) < 0;
                after = new EntityRecord(
                        ns,
                        sid,
                        displayName(forms),
                        normalized,
                        before.type(),
                        before.mentions() + count,
                        before.passages() + 1,
                        forms,
                        counted(before.aliases(), aliases, 1),
                        representative ? description : before.description(),
                        representative ? passageId : before.representative(),
                        representative ? Lsh.buckets(vector) : before.lsh(),
                        before.canonical());
                if (representative) {
                    putVector(sid, vector);
                }
                if (!after.aliases().keySet().equals(before.aliases().keySet())
                        || !after.description().equals(before.description())) {
                    decision("update", sid, null, "aliases_description", 1, List.of());
                }
            }
            entities.put(Keys.of(ns, sid), after);
        }
        StringBuilder lines = new StringBuilder();
        for (Map.Entry<String, List<Integer>> e : bySurface.entrySet()) {
            Extraction.Entity first = extraction.entities().get(e.getValue().get(0));
            lines.append(e.getKey())
                    .append(' ')
                    .append(NameForms.typeClass(first.type()).wireName())
                    .append(' ')
                    .append(first.name().replace('\n', ' '))
                    .append('\n');
        }
        passageEntities.put(Keys.of(ns, passageId), lines.toString());
        return List.copyOf(bySurface.keySet());
    }

    private void putVector(String sid, float[] vector) {
        if (vector == null) {
            entityVectors.delete(Keys.of(ns, sid));
        } else {
            entityVectors.put(Keys.of(ns, sid), VectorCodec.toBytes(vector));
        }
    }

    /** Unlinks a passage from its surfaces; a surface left without mentions leaves memory with its pairs. */
    void unlink(String passageId, List<String> surfaceIds) {
        passageEntities.delete(Keys.of(ns, passageId));
        for (String sid : surfaceIds) {
            MentionRecord mention = mentions.delete(Keys.of(ns, sid, passageId));
            if (mention == null) {
                continue;
            }
            sink.change(new MemoryChange.LinkRemoved(ns, sink.nextVersion(), sink.now(), passageId, sid));
            EntityRecord before = entities.get(Keys.of(ns, sid));
            if (before == null) {
                continue;
            }
            remember(sid, before);
            if (before.passages() <= 1) {
                entities.delete(Keys.of(ns, sid));
                entityVectors.delete(Keys.of(ns, sid));
                members.delete(Keys.of(ns, before.canonical(), sid));
                sink.counts(before.merged() ? 0 : -1, -1);
                sink.change(new MemoryChange.EntityRemoved(ns, sink.nextVersion(), sink.now(), sid, before.name()));
                continue;
            }
            Map<String, Integer> forms = new HashMap<>(before.forms());
            forms.computeIfPresent(mention.form(), (k, v) -> v <= 1 ? null : v - 1);
            EntityRecord after = new EntityRecord(
                    ns,
                    sid,
                    displayName(forms),
                    before.normalized(),
                    before.type(),
                    Math.max(0, before.mentions() - mention.mentions()),
                    before.passages() - 1,
                    forms,
                    counted(before.aliases(), mention.aliases(), -1),
                    before.description(),
                    before.representative(),
                    before.lsh(),
                    before.canonical());
            if (passageId.equals(before.representative())) {
                after = withRepresentative(after);
            }
            entities.put(Keys.of(ns, sid), after);
        }
    }

    private void remember(String sid, EntityRecord before) {
        touched.putIfAbsent(sid, Optional.ofNullable(before));
    }

    /** The representative is the smallest passage id still mentioning the surface: its description and vector. */
    private EntityRecord withRepresentative(EntityRecord e) {
        String prefix = Keys.prefix(ns, e.id());
        String passageId = null;
        MentionRecord mention = null;
        try (KeyValueIterator<String, MentionRecord> it = mentions.prefixScan(prefix, KEYS)) {
            if (it.hasNext()) {
                var kv = it.next();
                passageId = Keys.last(kv.key);
                mention = kv.value;
            }
        }
        if (passageId == null) {
            return e;
        }
        float[] vector = null;
        StoredPassage p = passages.get(Keys.of(ns, passageId));
        Embeddings emb = embeddings.get(Keys.of(ns, passageId));
        if (p != null && emb != null) {
            List<Extraction.Entity> list = p.extraction().entities();
            for (int i = 0; i < list.size() && i < emb.entities().size(); i++) {
                Extraction.Entity m = list.get(i);
                if (EntityNames.surfaceId(ns, m.name(), m.type()).equals(e.id())) {
                    vector = emb.entities().get(i);
                    break;
                }
            }
        }
        putVector(e.id(), vector);
        return e.withRepresentative(passageId, mention.description(), Lsh.buckets(vector));
    }

    // ---- search, verify, construct ----------------------------------------------------------------------------

    /**
     * An operator's decision about a pair: it overrides the rules for that pair until cleared, and survives the
     * surfaces leaving memory and coming back. Applied when the record is resolved.
     */
    void command(MemoryCommand c) {
        String a = c.entityId(); // distinct: a command naming one surface twice is dead-lettered when read
        String b = c.otherId();
        if (c.op() == MemoryCommand.Op.CLEAR) {
            overrides.delete(Keys.of(ns, a, b));
            overrides.delete(Keys.of(ns, b, a));
        } else {
            PairDecision.Kind decision =
                    c.op() == MemoryCommand.Op.SPLIT ? PairDecision.Kind.SPLIT : PairDecision.Kind.MERGE;
            List<String> evidence = c.reason().isBlank() ? List.of("operator") : List.of("operator: " + c.reason());
            PairDecision d = new PairDecision(ns, a, b, decision, "operator", 1, evidence, sink.now());
            overrides.put(Keys.of(ns, a, b), d);
            overrides.put(Keys.of(ns, b, a), d.mirrored());
        }
        commanded.add(a);
        commanded.add(b);
    }

    /** Re-indexes the surfaces this record touched, re-decides the pairs that depend on them and regroups. */
    void resolve() {
        if (touched.isEmpty() && commanded.isEmpty()) {
            return;
        }
        views.clear();
        candidateSets.clear();
        ambiguities.clear();
        Set<String> redecide = new TreeSet<>();
        Set<String> contextOnly = new TreeSet<>();
        Set<String> regroup = new TreeSet<>();
        for (Map.Entry<String, Optional<EntityRecord>> t : touched.entrySet()) {
            String sid = t.getKey();
            EntityRecord before = t.getValue().orElse(null);
            EntityRecord after = entities.get(Keys.of(ns, sid));
            Set<String> oldKeys = before == null ? Set.of() : blockKeys(before);
            Set<String> newKeys = after == null ? Set.of() : blockKeys(after);
            for (String k : oldKeys) {
                if (!newKeys.contains(k)) {
                    index.delete(Keys.of(ns, k, sid));
                    if (blockMembers(k, BLOCK_CAP + 1).size() == BLOCK_CAP) {
                        redecide.addAll(blockMembers(k, Integer.MAX_VALUE)); // the block discriminates again
                    }
                }
            }
            for (String k : newKeys) {
                if (!oldKeys.contains(k)) {
                    index.put(Keys.of(ns, k, sid), after.normalized());
                    if (blockMembers(k, BLOCK_CAP + 2).size() == BLOCK_CAP + 1) {
                        redecide.addAll(blockMembers(k, Integer.MAX_VALUE)); // the block stopped discriminating
                    }
                }
            }
            // A short form that this surface stands (or stood) for may have become (un)ambiguous.
            PairRules.Surface was = before == null ? null : view(before);
            PairRules.Surface is = after == null ? null : view(after);
            Set<String> keys = new TreeSet<>(oldKeys);
            keys.addAll(newKeys);
            boolean standsForChanged = before == null
                    || after == null
                    || !oldKeys.equals(newKeys)
                    || !before.name().equals(after.name());
            for (String k : standsForChanged ? keys : Set.<String>of()) {
                if (k.startsWith("v")) {
                    continue; // embedding blocks never decide ambiguity
                }
                for (String other : block(k)) {
                    PairRules.Surface o = other.equals(sid) ? null : surface(other);
                    if (o != null
                            && ((was != null && PairRules.shortForm(o, was) != null)
                                    || (is != null && PairRules.shortForm(o, is) != null))) {
                        redecide.add(other);
                    }
                }
            }
            if (after == null) {
                for (PairDecision p : storedPairs(sid).values()) {
                    pairs.delete(Keys.of(ns, p.otherId(), sid));
                    decision("cleared", p.otherId(), sid, p.rule(), p.score(), List.of("entity left memory"));
                    regroup.add(p.otherId());
                }
                pairs.delete(Keys.of(ns, sid, sid));
                deletePrefix(pairs, Keys.prefix(ns, sid));
                regroup.add(sid);
            } else if (sameDecisionInputs(before, after)) {
                contextOnly.add(sid); // a new or lost mention: only its context changed
            } else {
                redecide.add(sid);
            }
        }
        redecide.addAll(commanded);
        contextOnly.removeAll(redecide);
        for (String sid : redecide) {
            EntityRecord e = entities.get(Keys.of(ns, sid));
            if (e != null) {
                regroup.addAll(redecidePairs(e, false));
                regroup.add(sid);
            }
        }
        for (String sid : contextOnly) {
            EntityRecord e = entities.get(Keys.of(ns, sid));
            if (e != null) {
                regroup.addAll(redecidePairs(e, true));
                regroup.add(sid);
            }
        }
        regroupComponents(regroup);
    }

    /**
     * True when a surface kept everything a pair decision reads but its context: name, type, aliases, representative
     * embedding. Then only its stored pairs can change — every decision that context can turn (partial names, alike
     * names) is stored as defer or review while it waits — and the other candidates need not be decided again.
     */
    private static boolean sameDecisionInputs(EntityRecord before, EntityRecord after) {
        return before != null
                && before.name().equals(after.name())
                && before.type() == after.type()
                && before.aliases().keySet().equals(after.aliases().keySet())
                && before.lsh().equals(after.lsh())
                && before.representative().equals(after.representative())
                && before.description().equals(after.description());
    }

    /**
     * Decides every candidate pair of {@code e} anew ({@code storedOnly}: only the pairs that have a decision);
     * returns the surfaces whose pair decisions changed.
     */
    private Set<String> redecidePairs(EntityRecord e, boolean storedOnly) {
        PairRules.Surface self = view(e);
        Map<String, PairDecision> stored = storedPairs(e.id());
        Map<String, PairDecision> operator = new TreeMap<>();
        try (KeyValueIterator<String, PairDecision> it = overrides.prefixScan(Keys.prefix(ns, e.id()), KEYS)) {
            it.forEachRemaining(kv -> operator.put(Keys.last(kv.key), kv.value));
        }
        Map<String, PairDecision> now = new TreeMap<>();
        Set<String> toDecide = new TreeSet<>(storedOnly ? stored.keySet() : candidates(e));
        toDecide.addAll(operator.keySet());
        for (String candidate : toDecide) {
            if (candidate.equals(e.id())) {
                continue;
            }
            PairRules.Surface o = surface(candidate);
            if (o == null) {
                continue;
            }
            PairDecision override = operator.get(candidate);
            if (override != null) {
                now.put(
                        candidate,
                        new PairDecision(
                                ns,
                                e.id(),
                                candidate,
                                override.decision(),
                                override.rule(),
                                override.score(),
                                override.evidence(),
                                sink.now()));
                continue;
            }
            // Decided in one orientation (smaller id first), so a pair reads the same whichever side asks.
            boolean selfFirst = e.id().compareTo(candidate) < 0;
            PairRules.decide(selfFirst ? self : o, selfFirst ? o : self, lookup)
                    .ifPresent(d -> now.put(
                            candidate,
                            new PairDecision(
                                    ns,
                                    e.id(),
                                    candidate,
                                    d.decision(),
                                    d.rule(),
                                    d.score(),
                                    d.evidence(),
                                    sink.now())));
        }
        Set<String> changed = new TreeSet<>();
        for (Map.Entry<String, PairDecision> old : stored.entrySet()) {
            if (!now.containsKey(old.getKey())) {
                pairs.delete(Keys.of(ns, e.id(), old.getKey()));
                pairs.delete(Keys.of(ns, old.getKey(), e.id()));
                decision(
                        "cleared",
                        e.id(),
                        old.getKey(),
                        old.getValue().rule(),
                        old.getValue().score(),
                        List.of());
                changed.add(old.getKey());
            }
        }
        for (Map.Entry<String, PairDecision> d : now.entrySet()) {
            PairDecision previous = stored.get(d.getKey());
            if (d.getValue().sameAs(previous)) {
                continue;
            }
            pairs.put(Keys.of(ns, e.id(), d.getKey()), d.getValue());
            pairs.put(Keys.of(ns, d.getKey(), e.id()), d.getValue().mirrored());
            PairDecision v = d.getValue();
            if (v.decision() != PairDecision.Kind.MERGE) {
                decision(v.decision().wireName(), e.id(), d.getKey(), v.rule(), v.score(), v.evidence());
            }
            changed.add(d.getKey());
        }
        return changed;
    }

    /** Rebuilds the resolved groups of the components (over merge decisions) that contain these surfaces. */
    private void regroupComponents(Set<String> seeds) {
        Set<String> done = new LinkedHashSet<>();
        for (String seed : seeds) {
            if (done.contains(seed) || entities.get(Keys.of(ns, seed)) == null) {
                continue;
            }
            // The component: every surface reachable over merge decisions.
            Set<String> component = new TreeSet<>();
            List<PairDecision> edges = new ArrayList<>();
            Set<String> apart = new TreeSet<>();
            ArrayList<String> queue = new ArrayList<>(List.of(seed));
            component.add(seed);
            for (int q = 0; q < queue.size() && component.size() < COMPONENT_CAP; q++) {
                String x = queue.get(q);
                for (PairDecision p : storedPairs(x).values()) {
                    if (p.decision() != PairDecision.Kind.MERGE) {
                        apart.add(Keys.of(p.entityId(), p.otherId()));
                        continue;
                    }
                    if (p.entityId().compareTo(p.otherId()) < 0) {
                        edges.add(p);
                    }
                    if (component.add(p.otherId())) {
                        queue.add(p.otherId());
                    }
                }
            }
            done.addAll(component);
            group(component, edges, apart);
        }
    }

    /**
     * Greedy grouping in score order: a merge that would put two incompatible types in one group, or two surfaces
     * that were sent to review or deferred against each other ({@code apart}), is not made.
     */
    private void group(Set<String> component, List<PairDecision> edges, Set<String> apart) {
        Map<String, EntityRecord> records = new TreeMap<>();
        for (String sid : component) {
            EntityRecord e = entities.get(Keys.of(ns, sid));
            if (e != null) {
                records.put(sid, e);
            }
        }
        Map<String, String> parent = new HashMap<>();
        Map<String, EntityType> groupType = new HashMap<>();
        Map<String, Set<String>> groupMembers = new HashMap<>();
        records.forEach((sid, e) -> {
            parent.put(sid, sid);
            groupType.put(sid, e.type());
            groupMembers.put(sid, new TreeSet<>(Set.of(sid)));
        });
        edges.sort((x, y) -> {
            int c = Double.compare(y.score(), x.score());
            if (c != 0) {
                return c;
            }
            c = x.entityId().compareTo(y.entityId());
            return c != 0 ? c : x.otherId().compareTo(y.otherId());
        });
        Map<String, PairDecision> joinedBy = new HashMap<>();
        for (PairDecision edge : edges) {
            if (!parent.containsKey(edge.entityId()) || !parent.containsKey(edge.otherId())) {
                continue;
            }
            String ra = root(parent, edge.entityId());
            String rb = root(parent, edge.otherId());
            boolean operator = edge.rule().equals("operator");
            if (ra.equals(rb)
                    || (!operator && !NameForms.compatible(groupType.get(ra), groupType.get(rb)))
                    || keptApart(groupMembers.get(ra), groupMembers.get(rb), apart)) {
                continue;
            }
            String keep = ra.compareTo(rb) < 0 ? ra : rb;
            String drop = keep.equals(ra) ? rb : ra;
            parent.put(drop, keep);
            groupMembers.get(keep).addAll(groupMembers.remove(drop));
            groupType.put(keep, groupType.get(ra) == EntityType.OTHER ? groupType.get(rb) : groupType.get(ra));
            joinedBy.putIfAbsent(edge.entityId(), edge);
            joinedBy.putIfAbsent(edge.otherId(), edge);
        }
        for (EntityRecord e : records.values()) {
            String canonical = root(parent, e.id()); // roots are the smallest id of their group
            if (canonical.equals(e.canonical())) {
                continue;
            }
            members.delete(Keys.of(ns, e.canonical(), e.id()));
            members.put(Keys.of(ns, canonical, e.id()), e.normalized());
            boolean wasMerged = e.merged();
            boolean isMerged = !canonical.equals(e.id());
            sink.counts((wasMerged ? 1 : 0) - (isMerged ? 1 : 0), 0);
            if (wasMerged) {
                decision("unmerge", e.id(), e.canonical(), "regrouped", 1, List.of());
            }
            if (isMerged) {
                PairDecision why = joinedBy.get(e.id());
                decision(
                        "merge",
                        e.id(),
                        canonical,
                        why == null ? "group" : why.rule(),
                        why == null ? 1 : why.score(),
                        why == null ? List.of() : why.evidence());
            }
            entities.put(Keys.of(ns, e.id()), e.withCanonical(canonical));
        }
    }

    private static boolean keptApart(Set<String> a, Set<String> b, Set<String> apart) {
        if (apart.isEmpty()) {
            return false;
        }
        for (String x : a) {
            for (String y : b) {
                if (apart.contains(Keys.of(x, y))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String root(Map<String, String> parent, String x) {
        String r = x;
        while (!parent.get(r).equals(r)) {
            r = parent.get(r);
        }
        return r;
    }

    // ---- blocking ---------------------------------------------------------------------------------------------

    /** The blocking keys of a surface: loose form, aliases, acronym and initials, tokens, embedding hashes. */
    static Set<String> blockKeys(EntityRecord e) {
        Set<String> keys = new TreeSet<>();
        keys.add(BlockKeys.loose(NameForms.loose(e.normalized())));
        keys.add(BlockKeys.name(e.normalized()));
        e.aliases().keySet().forEach(a -> keys.add(BlockKeys.name(a)));
        String acronym = NameForms.asAcronym(e.normalized(), e.name());
        if (acronym != null) {
            keys.add(BlockKeys.shortForm(acronym));
        }
        NameForms.initials(e.normalized()).forEach(i -> keys.add(BlockKeys.shortForm(i)));
        NameForms.blockingTokens(e.normalized()).forEach(t -> keys.add(BlockKeys.token(t)));
        for (int band = 0; band < e.lsh().size(); band++) {
            keys.add(BlockKeys.embedding(band, e.lsh().get(band)));
        }
        return keys;
    }

    /** The surfaces in a block, or none when the block is too large to discriminate. */
    private List<String> block(String key) {
        List<String> out = blockMembers(key, BLOCK_CAP + 1);
        if (out.size() > BLOCK_CAP) {
            meters.blockSkipped();
            return List.of();
        }
        return out;
    }

    /** Up to {@code limit} surfaces of a block. */
    private List<String> blockMembers(String key, int limit) {
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, String> it = index.prefixScan(Keys.prefix(ns, key), KEYS)) {
            while (it.hasNext() && out.size() < limit) {
                out.add(Keys.last(it.next().key));
            }
        }
        return out;
    }

    private Set<String> candidates(EntityRecord e) {
        return candidateSets.computeIfAbsent(e.id(), id -> {
            Set<String> out = new TreeSet<>();
            for (String key : blockKeys(e)) {
                out.addAll(block(key));
            }
            return out;
        });
    }

    /** The view of a surface in memory, or null; cached while deciding. */
    private PairRules.Surface surface(String sid) {
        return views.computeIfAbsent(sid, id -> Optional.ofNullable(entities.get(Keys.of(ns, id)))
                        .map(this::view))
                .orElse(null);
    }

    private Map<String, PairDecision> storedPairs(String sid) {
        Map<String, PairDecision> out = new TreeMap<>();
        try (KeyValueIterator<String, PairDecision> it = pairs.prefixScan(Keys.prefix(ns, sid), KEYS)) {
            it.forEachRemaining(kv -> out.put(Keys.last(kv.key), kv.value));
        }
        return out;
    }

    // ---- what a decision reads --------------------------------------------------------------------------------

    private PairRules.Surface view(EntityRecord e) {
        String key = Keys.of(ns, e.id());
        if (parsedNames.size() > 100_000) {
            parsedNames.clear();
        }
        NameForms.Name name = parsedNames.computeIfAbsent(
                e.normalized() + Keys.SEPARATOR + e.name(), k -> NameForms.parse(e.normalized(), e.name()));
        return new PairRules.Surface(
                e.id(), name, e.type(), e.aliases().keySet(), Set.copyOf(e.lsh()), new java.util.function.Supplier<>() {
                    private float[] vector;
                    private boolean loaded;

                    @Override
                    public float[] get() {
                        if (!loaded) {
                            byte[] bytes = entityVectors.get(key);
                            vector = bytes == null ? null : VectorCodec.fromBytes(bytes);
                            loaded = true;
                        }
                        return vector;
                    }
                });
    }

    private final PairRules.Lookup lookup = new PairRules.Lookup() {
        @Override
        public int ambiguity(PairRules.Surface shortSide, PairRules.ShortForm family) {
            String key = shortSide.id() + "|"
                    + (family == PairRules.ShortForm.PARTIAL ? PairRules.ShortForm.ALIAS : family).name();
            return ambiguities.computeIfAbsent(key, k -> count(shortSide, family));
        }

        private int count(PairRules.Surface shortSide, PairRules.ShortForm family) {
            EntityRecord self = entities.get(Keys.of(ns, shortSide.id()));
            if (self == null) {
                return 0;
            }
            Set<PairRules.ShortForm> same = family == PairRules.ShortForm.ALIAS || family == PairRules.ShortForm.PARTIAL
                    ? Set.of(PairRules.ShortForm.ALIAS, PairRules.ShortForm.PARTIAL)
                    : Set.of(family);
            Set<String> names = new TreeSet<>();
            Set<String> nameCandidates = new TreeSet<>();
            for (String key : blockKeys(self)) {
                if (BlockKeys.isEmbedding(key)) {
                    continue; // embedding neighbours never make a name ambiguous
                }
                List<String> members = blockMembers(key, BLOCK_CAP + 1);
                if (members.size() > BLOCK_CAP) {
                    return PairRules.MAX_REVIEWED_AMBIGUITY + 1; // too common a name to stand for one entity
                }
                nameCandidates.addAll(members);
            }
            for (String candidate : nameCandidates) {
                PairRules.Surface other = surface(candidate);
                if (other == null || !NameForms.compatible(self.type(), other.type())) {
                    continue;
                }
                PairRules.ShortForm f = PairRules.shortForm(shortSide, other);
                if (f != null && same.contains(f)) {
                    names.add(other.normalized() + "|" + other.type().wireName());
                }
            }
            return names.size();
        }

        @Override
        public List<String> sharedContext(PairRules.Surface a, PairRules.Surface b) {
            Context ca = context(a.id());
            Context cb = context(b.id());
            List<String> out = new ArrayList<>();
            for (String d : ca.documents) {
                if (cb.documents.contains(d)) {
                    out.add("both in document " + d);
                    break;
                }
            }
            if (!out.isEmpty()) {
                return out;
            }
            // Places are mentioned with everything; one shared place is not enough, two shared entities are.
            List<String> shared = new ArrayList<>();
            boolean specific = false;
            for (Map.Entry<String, Neighbour> n : ca.neighbours.entrySet()) {
                if (!n.getKey().equals(a.id()) && !n.getKey().equals(b.id()) && cb.neighbours.containsKey(n.getKey())) {
                    shared.add("both mentioned with \"" + n.getValue().name() + "\"");
                    String t = n.getValue().type();
                    specific |= !t.equals(EntityType.PLACE.wireName())
                            && !t.equals(EntityType.DATE.wireName())
                            && !t.equals(EntityType.NUMBER.wireName());
                }
            }
            return specific || shared.size() >= 2 ? shared.subList(0, Math.min(3, shared.size())) : List.of();
        }
    };

    /** The documents and co-mentioned surfaces of a surface's first passages (by passage id). */
    private record Context(Set<String> documents, Map<String, Neighbour> neighbours) {}

    private Context context(String sid) {
        return contexts.computeIfAbsent(sid, id -> {
            Set<String> documents = new TreeSet<>();
            Map<String, Neighbour> neighbours = new TreeMap<>();
            try (KeyValueIterator<String, MentionRecord> it = mentions.prefixScan(Keys.prefix(ns, id), KEYS)) {
                for (int n = 0; it.hasNext() && n < CONTEXT_PASSAGES; n++) {
                    var kv = it.next();
                    documents.add(kv.value.documentId());
                    String lines = passageEntities.get(Keys.of(ns, Keys.last(kv.key)));
                    if (lines == null) {
                        continue;
                    }
                    for (String line : lines.split("\n", -1)) {
                        String[] parts = line.split(" ", 3);
                        if (parts.length == 3) {
                            neighbours.putIfAbsent(parts[0], new Neighbour(parts[2], parts[1]));
                        }
                    }
                }
            }
            return new Context(documents, neighbours);
        });
    }

    private record Neighbour(String name, String type) {}

    // ---- helpers ----------------------------------------------------------------------------------------------

    private void decision(String decision, String sid, String other, String rule, double score, List<String> ev) {
        sink.change(new MemoryChange.EntityDecision(
                ns, sink.nextVersion(), sink.now(), decision, sid, other, rule, score, ev));
        meters.resolution(decision);
    }

    private static Map<String, Integer> counted(Map<String, Integer> base, Iterable<String> keys, int delta) {
        Map<String, Integer> out = new TreeMap<>(base);
        for (String k : keys) {
            out.merge(k, delta, Integer::sum);
            if (out.get(k) <= 0) {
                out.remove(k);
            }
        }
        return out;
    }

    /** The most used written form; ties go to the lexicographically smallest, so history does not matter. */
    static String displayName(Map<String, Integer> forms) {
        String best = null;
        int count = -1;
        for (Map.Entry<String, Integer> f : new TreeMap<>(forms).entrySet()) {
            if (f.getValue() > count) {
                best = f.getKey();
                count = f.getValue();
            }
        }
        return best;
    }

    private static <V> void deletePrefix(KeyValueStore<String, V> store, String prefix) {
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, V> it = store.prefixScan(prefix, KEYS)) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(store::delete);
    }

    /** Random-hyperplane hashes of an embedding, fixed by a seed so that every instance computes the same. */
    static final class Lsh {
        private static final Map<Integer, float[][]> PLANES = new java.util.concurrent.ConcurrentHashMap<>();

        private Lsh() {}

        /** The bucket of every band, or none without a vector. */
        static List<Integer> buckets(float[] v) {
            if (v == null || v.length == 0) {
                return List.of();
            }
            List<Integer> out = new ArrayList<>();
            for (int band = 0; band < LSH_BANDS; band++) {
                out.add(bucket(v, band));
            }
            return out;
        }

        static int bucket(float[] v, int band) {
            float[][] planes = PLANES.computeIfAbsent(v.length, Lsh::planes);
            int bucket = 0;
            for (int bit = 0; bit < LSH_BITS; bit++) {
                float[] plane = planes[band * LSH_BITS + bit];
                double dot = 0;
                for (int i = 0; i < v.length; i++) {
                    dot += plane[i] * v[i];
                }
                bucket = (bucket << 1) | (dot >= 0 ? 1 : 0);
            }
            return bucket;
        }

        private static float[][] planes(int dimensions) {
            Random random = new Random(0x5eedL);
            float[][] planes = new float[LSH_BANDS * LSH_BITS][dimensions];
            for (float[] plane : planes) {
                for (int i = 0; i < dimensions; i++) {
                    plane[i] = (float) random.nextGaussian();
                }
            }
            return planes;
        }
    }
}
