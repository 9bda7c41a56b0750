package dev.engram.query;

import dev.engram.query.Responses.Decision;
import dev.engram.query.Responses.Entity;
import dev.engram.query.Responses.Fact;
import dev.engram.query.Responses.Mention;
import dev.engram.query.Responses.MergeGroup;
import dev.engram.query.Responses.MergedSurface;
import dev.engram.query.Responses.Surface;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.stores.BlockKeys;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StoredPassage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Resolved entities as the HTTP layer shows them: a resolved entity is the group of surface entities that entity
 * resolution merged, with its aliases, the passages that mention it (with provenance), the facts those passages state
 * about it, and every resolution decision that touches it.
 */
public final class EntityViews {

    /** At most this many passages, facts and decisions are listed per entity; totals are always given. */
    static final int LIST_LIMIT = 100;
    /** At most this many surfaces are read from one name block when a name is looked up. */
    private static final int NAME_BLOCK_LIMIT = 1000;

    private final MemoryReader memory;

    public EntityViews(MemoryReader memory) {
        this.memory = memory;
    }

    /**
     * The ids of the resolved entities a name refers to: by their own names (loosely), and with {@code aliases} also
     * by the aliases extractors declared for them.
     */
    public Set<String> resolvedIds(String ns, String name, boolean aliases) {
        String normalized = EntityNames.normalize(name);
        Set<String> canonicals = new TreeSet<>();
        if (normalized.isEmpty()) {
            return canonicals;
        }
        String loose = EntityNames.loose(normalized);
        for (String key : List.of(BlockKeys.name(normalized), BlockKeys.loose(loose))) {
            for (String sid : memory.block(ns, key, NAME_BLOCK_LIMIT)) {
                memory.entity(ns, sid)
                        .filter(e ->
                                aliases || EntityNames.loose(e.normalized()).equals(loose))
                        .ifPresent(e -> canonicals.add(e.canonical()));
            }
        }
        return canonicals;
    }

    /** Resolved entities a name (or one of their aliases, or its loose form) refers to. */
    public List<Entity> byName(String ns, String name) {
        List<Entity> found = new ArrayList<>();
        for (String canonical : resolvedIds(ns, name, true)) {
            byId(ns, canonical).ifPresent(found::add);
        }
        return found;
    }

    /** The resolved entity that holds this surface id, with the first page of its passages. */
    public Optional<Entity> byId(String ns, String id) {
        return byId(ns, id, null, LIST_LIMIT);
    }

    /**
     * The resolved entity that holds this surface id, with one page of the passages that mention it: at most {@code
     * limit} passages after {@code after} (in passage-id order), their mentions and the facts they state about it. The
     * work is the page's, however many passages mention a hub; {@code next} continues it.
     */
    public Optional<Entity> byId(String ns, String id, String after, int limit) {
        Optional<EntityRecord> found = memory.entity(ns, id);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        EntityRecord start = found.get();
        List<EntityRecord> surfaces = members(ns, start.canonical());
        if (surfaces.isEmpty()) {
            surfaces = List.of(start);
        }
        EntityRecord main = surfaces.stream()
                .max(Comparator.comparingInt(EntityRecord::mentions)
                        .thenComparingInt(e -> e.name().length())
                        .thenComparing(EntityRecord::id, Comparator.reverseOrder()))
                .orElseThrow();
        EntityType type = surfaces.stream()
                .filter(e -> e.type() != EntityType.OTHER)
                .max(Comparator.comparingInt(EntityRecord::mentions))
                .map(EntityRecord::type)
                .orElse(EntityType.OTHER);
        Set<String> aliases = new LinkedHashSet<>();
        Set<String> names = new TreeSet<>();
        int mentions = 0;
        List<Surface> surfaceViews = new ArrayList<>();
        for (EntityRecord e : surfaces) {
            mentions += e.mentions();
            names.add(e.normalized());
            names.addAll(e.aliases().keySet());
            if (!e.name().equals(main.name())) {
                aliases.add(e.name());
            }
            e.forms().keySet().stream().filter(f -> !f.equals(main.name())).forEach(aliases::add);
            surfaceViews.add(new Surface(e.id(), e.name(), e.type(), e.mentions(), e.passages(), e.description()));
        }

        // the page: the first `limit` passages after `after` over every surface (a passage may mention several)
        TreeSet<String> page = new TreeSet<>();
        List<Map.Entry<EntityRecord, MemoryReader.Mention>> links = new ArrayList<>();
        boolean more = false;
        for (EntityRecord e : surfaces) {
            List<MemoryReader.Mention> ofSurface = memory.mentions(ns, e.id(), after, limit + 1);
            more |= ofSurface.size() > limit;
            for (MemoryReader.Mention link : ofSurface) {
                links.add(Map.entry(e, link));
                page.add(link.passageId());
            }
        }
        while (page.size() > limit) {
            page.pollLast();
            more = true;
        }
        links.removeIf(l -> !page.contains(l.getValue().passageId()));
        links.sort(Comparator.comparing((Map.Entry<EntityRecord, MemoryReader.Mention> l) ->
                        l.getValue().passageId())
                .thenComparing(l -> l.getKey().id()));
        int passageCount = 0;
        for (EntityRecord e : surfaces) {
            passageCount += e.passages();
        }

        List<Mention> provenance = new ArrayList<>();
        List<Fact> facts = new ArrayList<>();
        Set<String> passageIds = new TreeSet<>();
        int factTotal = 0;
        for (Map.Entry<EntityRecord, MemoryReader.Mention> entry : links) {
            EntityRecord e = entry.getKey();
            String passageId = entry.getValue().passageId();
            MentionRecord m = entry.getValue().record();
            // declared aliases as the extractor wrote them (records from before written forms were kept have the
            // normalized ones only)
            (m.aliasForms().isEmpty() ? m.aliases() : m.aliasForms())
                    .stream().filter(a -> !a.equals(main.name())).forEach(aliases::add);
            provenance.add(new Mention(
                    passageId,
                    m.documentId(),
                    e.id(),
                    m.form(),
                    m.mentions(),
                    m.spans(),
                    m.extractor(),
                    m.operation(),
                    m.at()));
            if (!passageIds.add(passageId)) {
                continue;
            }
            Optional<StoredPassage> stored = memory.passage(ns, passageId);
            if (stored.isEmpty()) {
                continue;
            }
            StoredPassage p = stored.get();
            for (Extraction.Fact f : p.extraction().facts()) {
                if (names.contains(EntityNames.normalize(f.head()))
                        || names.contains(EntityNames.normalize(f.tail()))) {
                    factTotal++;
                    facts.add(new Fact(
                            f.head(),
                            f.relation(),
                            f.tail(),
                            f.evidence(),
                            f.confidence(),
                            passageId,
                            p.documentId(),
                            p.extraction().extractor()));
                }
            }
        }
        List<Decision> decisions = new ArrayList<>();
        for (EntityRecord e : surfaces) {
            for (PairDecision d : memory.pairs(ns, e.id(), LIST_LIMIT - decisions.size())) {
                decisions.add(decision(ns, d));
            }
        }
        return Optional.of(new Entity(
                start.canonical(),
                main.name(),
                type,
                List.copyOf(aliases),
                main.description(),
                mentions,
                passageCount,
                surfaceViews,
                provenance,
                factTotal,
                facts,
                decisions,
                more ? page.last() : null));
    }

    /** Resolved entities that group more than one surface, with the merge decisions that made each group. */
    public Responses.Merges merges(String ns, int limit) {
        List<MergeGroup> out = new ArrayList<>();
        long total = 0;
        for (Map.Entry<String, List<String>> g : memory.groups(ns).entrySet()) {
            if (g.getValue().size() < 2) {
                continue;
            }
            total++;
            if (out.size() >= limit) {
                continue;
            }
            Set<String> inGroup = new TreeSet<>(g.getValue());
            List<MergedSurface> surfaces = new ArrayList<>();
            List<Decision> decisions = new ArrayList<>();
            for (String sid : g.getValue()) {
                Optional<EntityRecord> found = memory.entity(ns, sid);
                if (found.isEmpty()) {
                    continue;
                }
                EntityRecord e = found.get();
                surfaces.add(new MergedSurface(e.id(), e.name(), e.type(), e.mentions()));
                for (PairDecision d : memory.pairs(ns, sid)) {
                    if (d.decision() == PairDecision.Kind.MERGE
                            && inGroup.contains(d.otherId())
                            && d.entityId().compareTo(d.otherId()) < 0) {
                        decisions.add(decision(ns, d));
                    }
                }
            }
            out.add(new MergeGroup(g.getKey(), surfaces, decisions));
        }
        return new Responses.Merges(ns, total, out);
    }

    /** Pairs waiting for a person (review) or for more evidence (defer). */
    public Responses.PendingPairs pendingPairs(String ns, int limit) {
        List<Decision> out = new ArrayList<>();
        long[] total = {0};
        memory.forEachPair(ns, d -> {
            boolean pending = d.decision() == PairDecision.Kind.REVIEW || d.decision() == PairDecision.Kind.DEFER;
            if (!pending || d.entityId().compareTo(d.otherId()) > 0) {
                return;
            }
            total[0]++;
            if (out.size() < limit) {
                out.add(decision(ns, d));
            }
        });
        return new Responses.PendingPairs(total[0], out);
    }

    private Decision decision(String ns, PairDecision d) {
        return new Decision(
                d.entityId(),
                memory.entity(ns, d.entityId()).map(EntityRecord::name).orElse(null),
                d.otherId(),
                memory.entity(ns, d.otherId()).map(EntityRecord::name).orElse(null),
                d.decision(),
                d.rule(),
                d.score(),
                d.evidence(),
                d.features(),
                d.at());
    }

    private List<EntityRecord> members(String ns, String canonical) {
        List<EntityRecord> out = new ArrayList<>();
        for (String sid : memory.members(ns, canonical)) {
            memory.entity(ns, sid).ifPresent(out::add);
        }
        return out;
    }
}
