package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MemoryCommand;
import dev.engram.stores.BlockKeys;
import dev.engram.stores.DescriptionSense;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import dev.engram.stores.ReadCache;
import dev.engram.stores.StoredVectors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * VERIFY for entity resolution, within one record: decides the candidate pairs of a surface by {@link PairRules} — or
 * by an operator's override of the pair — and stores every decision (merge, review, defer, split) in both directions
 * with its rule, score and evidence, emitting a decision change for each one that is not a merge (merges show as the
 * groups change) and for each that no longer holds. A decision reads only the two surfaces, how many surfaces the
 * shorter name could stand for (its ambiguity, counted over the name blocks) and the context both share.
 */
final class PairDecider {

    private final MemoryTransaction tx;
    private final BlockingIndex index;
    private final Contexts contexts;
    private final Names names;
    private final MergeModel model;
    /** Surface views and ambiguity counts: memory does not change while pairs are decided. */
    private final Map<String, Optional<PairRules.Surface>> views = new HashMap<>();

    private final Map<String, Integer> ambiguities = new HashMap<>();
    private final Map<String, Integer> referentCounts = new HashMap<>();

    PairDecider(MemoryTransaction tx, BlockingIndex index, Contexts contexts, Names names, MergeModel model) {
        this.tx = tx;
        this.model = model;
        this.index = index;
        this.contexts = contexts;
        this.names = names;
    }

    /**
     * What the rules read of each surface that needs parsing (its name's forms, aliases and hashes), kept across
     * records for the entity record it was parsed from: reused while the surface's record stays the same (the stores
     * keep decoded records), parsed again once it changed. Least recently used leave first.
     */
    static final class Names {
        record Parsed(EntityRecord source, NameForms.Name name, Set<String> aliases, Set<Integer> lsh) {
            static Parsed of(EntityRecord e) {
                return new Parsed(
                        e,
                        NameForms.parse(e.normalized(), e.name()),
                        e.aliases().keySet(),
                        Set.copyOf(e.lsh()));
            }
        }

        private final ReadCache<Parsed> parsed = new ReadCache<>(MemoryStores.ENTITY_CACHE);

        Parsed of(String key, EntityRecord e) {
            Parsed p = parsed.get(key, k -> Parsed.of(e));
            if (!p.source().equals(e)) {
                p = Parsed.of(e);
                parsed.written(key, p);
            }
            return p;
        }
    }

    /** The stored decisions of a surface, by the other surface. */
    static Map<String, PairDecision> stored(MemoryTransaction tx, String sid) {
        Map<String, PairDecision> out = new TreeMap<>();
        try (KeyValueIterator<String, PairDecision> it = tx.pairs().prefixScan(Keys.prefix(tx.namespace(), sid))) {
            it.forEachRemaining(kv -> out.put(Keys.last(kv.key), kv.value));
        }
        return out;
    }

    /**
     * Stores an operator's decision about a pair: it overrides the rules for that pair until cleared, and survives the
     * surfaces leaving memory and coming back. Applied when the pair is decided again.
     */
    void override(MemoryCommand c) {
        String ns = tx.namespace();
        String a = c.entityId(); // distinct: a command naming one surface twice is dead-lettered when read
        String b = c.otherId();
        if (c.op() == MemoryCommand.Op.CLEAR) {
            tx.overrides().delete(Keys.of(ns, a, b));
            tx.overrides().delete(Keys.of(ns, b, a));
        } else {
            PairDecision.Kind decision =
                    c.op() == MemoryCommand.Op.SPLIT ? PairDecision.Kind.SPLIT : PairDecision.Kind.MERGE;
            List<String> evidence = c.reason().isBlank() ? List.of("operator") : List.of("operator: " + c.reason());
            PairDecision d = new PairDecision(ns, a, b, decision, "operator", 1, evidence, tx.now());
            tx.overrides().put(Keys.of(ns, a, b), d);
            tx.overrides().put(Keys.of(ns, b, a), d.mirrored());
        }
    }

    /**
     * The surfaces whose pairs depend on how many surfaces a short name could stand for, when {@code sid} changed
     * from {@code before} to {@code after} (either null: new, or gone): the others in its name blocks that it is (or
     * was) a short form of.
     */
    Set<String> shortFormNeighbours(String sid, EntityRecord before, EntityRecord after) {
        Set<String> oldKeys = before == null ? Set.of() : BlockingIndex.blockKeys(before);
        Set<String> newKeys = after == null ? Set.of() : BlockingIndex.blockKeys(after);
        PairRules.Surface was = before == null ? null : view(before);
        PairRules.Surface is = after == null ? null : view(after);
        boolean standsForChanged = before == null
                || after == null
                || !oldKeys.equals(newKeys)
                || !before.name().equals(after.name());
        Set<String> out = new TreeSet<>();
        if (!standsForChanged) {
            return out;
        }
        Set<String> keys = new TreeSet<>(oldKeys);
        keys.addAll(newKeys);
        for (String k : keys) {
            if (BlockKeys.isEmbedding(k)) {
                continue; // embedding blocks never decide ambiguity
            }
            for (String other : index.block(k)) {
                PairRules.Surface o = other.equals(sid) ? null : surface(other);
                if (o != null
                        && ((was != null && PairRules.shortForm(o, was) != null)
                                || (is != null && PairRules.shortForm(o, is) != null))) {
                    out.add(other);
                }
            }
        }
        return out;
    }

    /** A surface left memory: its pairs go, each cleared; returns the surfaces it was paired with. */
    Set<String> forget(String sid) {
        String ns = tx.namespace();
        Set<String> others = new TreeSet<>();
        for (PairDecision p : stored(tx, sid).values()) {
            tx.pairs().delete(Keys.of(ns, p.otherId(), sid));
            tx.decision(
                    MemoryChange.EntityDecision.Kind.CLEARED,
                    p.otherId(),
                    sid,
                    p.rule(),
                    p.score(),
                    List.of("entity left memory"));
            others.add(p.otherId());
        }
        tx.pairs().delete(Keys.of(ns, sid, sid));
        tx.pairs().deletePrefix(Keys.prefix(ns, sid));
        return others;
    }

    /**
     * Decides every candidate pair of {@code e} anew ({@code storedOnly}: only the pairs that have a decision) and
     * stores what changed; returns the surfaces whose pair decisions changed.
     */
    Set<String> redecide(EntityRecord e, boolean storedOnly) {
        String ns = tx.namespace();
        PairRules.Surface self = view(e);
        Map<String, PairDecision> stored = stored(tx, e.id());
        Map<String, PairDecision> operator = new TreeMap<>();
        try (KeyValueIterator<String, PairDecision> it = tx.overrides().prefixScan(Keys.prefix(ns, e.id()))) {
            it.forEachRemaining(kv -> operator.put(Keys.last(kv.key), kv.value));
        }
        Map<String, PairDecision> now = new TreeMap<>();
        Set<String> toDecide = new TreeSet<>(storedOnly ? stored.keySet() : index.candidates(e));
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
                                tx.now()));
                continue;
            }
            // Decided in one orientation (smaller id first), so a pair reads the same whichever side asks.
            boolean selfFirst = e.id().compareTo(candidate) < 0;
            PairRules.decide(selfFirst ? self : o, selfFirst ? o : self, lookup, model)
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
                                    tx.now(),
                                    d.features())));
        }
        Set<String> changed = new TreeSet<>();
        for (Map.Entry<String, PairDecision> old : stored.entrySet()) {
            if (!now.containsKey(old.getKey())) {
                tx.pairs().delete(Keys.of(ns, e.id(), old.getKey()));
                tx.pairs().delete(Keys.of(ns, old.getKey(), e.id()));
                tx.decision(
                        MemoryChange.EntityDecision.Kind.CLEARED,
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
            tx.pairs().put(Keys.of(ns, e.id(), d.getKey()), d.getValue());
            tx.pairs().put(Keys.of(ns, d.getKey(), e.id()), d.getValue().mirrored());
            PairDecision v = d.getValue();
            if (v.decision() != PairDecision.Kind.MERGE) {
                tx.decision(kindOf(v.decision()), e.id(), d.getKey(), v.rule(), v.score(), v.evidence());
            }
            changed.add(d.getKey());
        }
        return changed;
    }

    /** The decision change of a stored pair decision. */
    static MemoryChange.EntityDecision.Kind kindOf(PairDecision.Kind kind) {
        return switch (kind) {
            case MERGE -> MemoryChange.EntityDecision.Kind.MERGE;
            case REVIEW -> MemoryChange.EntityDecision.Kind.REVIEW;
            case DEFER -> MemoryChange.EntityDecision.Kind.DEFER;
            case SPLIT -> MemoryChange.EntityDecision.Kind.SPLIT;
        };
    }

    // ---- what a decision reads -------------------------------------------------------------------------------------

    /** The view of a surface in memory, or null; kept for the record. */
    PairRules.Surface surface(String sid) {
        return views.computeIfAbsent(
                        sid, id -> Optional.ofNullable(tx.entities().get(Keys.of(tx.namespace(), id)))
                                .map(this::view))
                .orElse(null);
    }

    /** What the rules read of a surface; its embedding is loaded when a rule first asks for it. */
    PairRules.Surface view(EntityRecord e) {
        String key = Keys.of(tx.namespace(), e.id());
        Names.Parsed parsed = names.of(key, e);
        return new PairRules.Surface(
                e.id(),
                parsed.name(),
                e.type(),
                parsed.aliases(),
                parsed.lsh(),
                new Supplier<>() {
                    private float[] vector;
                    private boolean loaded;

                    @Override
                    public float[] get() {
                        if (!loaded) {
                            byte[] bytes = tx.entityVectors().get(key);
                            vector = bytes == null ? null : StoredVectors.decode(bytes);
                            loaded = true;
                        }
                        return vector;
                    }
                },
                e.description());
    }

    /** How many surfaces a short name could stand for, counted once per record and family. */
    int ambiguity(PairRules.Surface shortSide, PairRules.ShortForm family) {
        String key = shortSide.id() + "|"
                + (family == PairRules.ShortForm.PARTIAL ? PairRules.ShortForm.ALIAS : family).name();
        return ambiguities.computeIfAbsent(key, k -> count(shortSide, family));
    }

    private int count(PairRules.Surface shortSide, PairRules.ShortForm family) {
        EntityRecord self = tx.entities().get(Keys.of(tx.namespace(), shortSide.id()));
        if (self == null) {
            return 0;
        }
        Set<PairRules.ShortForm> same = family == PairRules.ShortForm.ALIAS || family == PairRules.ShortForm.PARTIAL
                ? Set.of(PairRules.ShortForm.ALIAS, PairRules.ShortForm.PARTIAL)
                : Set.of(family);
        Map<String, Set<EntityType>> found = new TreeMap<>(); // normalized name → its types
        Set<String> nameCandidates = new TreeSet<>();
        for (String key : BlockingIndex.blockKeys(self)) {
            if (BlockKeys.isEmbedding(key)) {
                continue; // embedding neighbours never make a name ambiguous
            }
            List<String> members = index.members(key, BlockingIndex.BLOCK_CAP + 1);
            if (members.size() > BlockingIndex.BLOCK_CAP) {
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
                found.computeIfAbsent(other.normalized(), k -> new TreeSet<>()).add(other.type());
            }
        }
        // A name found untyped as well as typed is one referent: an unknown type is no evidence of another.
        int referents = 0;
        for (Set<EntityType> types : found.values()) {
            referents += types.size() > 1 && types.contains(EntityType.OTHER) ? types.size() - 1 : types.size();
        }
        return referents;
    }

    /** How many referents the described surfaces of a bare name stand for, counted once per record. */
    int referents(PairRules.Surface bare) {
        return referentCounts.computeIfAbsent(bare.id(), id -> countReferents(bare));
    }

    private int countReferents(PairRules.Surface bare) {
        List<String> members = index.members(BlockKeys.loose(bare.name().loose()), BlockingIndex.BLOCK_CAP + 1);
        if (members.size() > BlockingIndex.BLOCK_CAP) {
            return Integer.MAX_VALUE; // too many surfaces of one name to say which referent a bare mention names
        }
        List<PairRules.Surface> described = new ArrayList<>();
        List<DescriptionSense> senses = new ArrayList<>(); // parsed once: compared pairwise below
        for (String m : members) {
            PairRules.Surface s = m.equals(bare.id()) ? null : surface(m);
            DescriptionSense sense = s == null ? DescriptionSense.NONE : s.sense();
            if (!sense.isNone()
                    && s.name().loose().equals(bare.name().loose())
                    && NameForms.compatible(s.type(), bare.type())) {
                described.add(s);
                senses.add(sense);
            }
        }
        // groups of descriptions that do not conflict (connected components): independent of the order of members
        int[] parent = new int[described.size()];
        for (int i = 0; i < parent.length; i++) {
            parent[i] = i;
        }
        int groups = parent.length;
        for (int i = 0; i < parent.length; i++) {
            for (int j = i + 1; j < parent.length; j++) {
                PairRules.Surface x = described.get(i);
                PairRules.Surface y = described.get(j);
                int ri = root(parent, i);
                int rj = root(parent, j);
                if (ri != rj
                        && !senses.get(i)
                                .conflicts(
                                        senses.get(j),
                                        () -> PairRules.cosine(x.vector(), y.vector())
                                                >= PairRules.EMBEDDING_SUPPORT)) {
                    parent[Math.max(ri, rj)] = Math.min(ri, rj);
                    groups--;
                }
            }
        }
        return groups;
    }

    private static int root(int[] parent, int i) {
        int r = i;
        while (parent[r] != r) {
            r = parent[r];
        }
        return r;
    }

    /**
     * The surfaces whose decisions depend on how many described referents their name has, when {@code sid} changed
     * from {@code before} to {@code after} (either null: new, or gone): the others of its name when it is described.
     */
    Set<String> referentNeighbours(String sid, EntityRecord before, EntityRecord after) {
        EntityRecord e = after != null ? after : before;
        if ((before == null) == (after == null)
                || DescriptionSense.of(e.description()).isNone()) {
            return Set.of();
        }
        Set<String> out = new TreeSet<>(index.block(BlockKeys.loose(NameForms.loose(e.normalized()))));
        out.remove(sid);
        return out;
    }

    private final PairRules.Lookup lookup = new PairRules.Lookup() {
        @Override
        public int ambiguity(PairRules.Surface shortSide, PairRules.ShortForm family) {
            return PairDecider.this.ambiguity(shortSide, family);
        }

        @Override
        public SharedContext shared(PairRules.Surface a, PairRules.Surface b) {
            return contexts.shared(a.id(), b.id());
        }

        @Override
        public int referents(PairRules.Surface bare) {
            return PairDecider.this.referents(bare);
        }
    };
}
