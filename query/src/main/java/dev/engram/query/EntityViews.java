package dev.engram.query;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.stores.BlockKeys;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.PairDecision;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Resolved entities as the HTTP layer shows them: a resolved entity is the group of surface entities that entity
 * resolution merged, with its aliases, the passages that mention it (with provenance), the facts those passages state
 * about it, and every resolution decision that touches it.
 */
public final class EntityViews {

    /** At most this many passages, facts and decisions are listed per entity; totals are always given. */
    static final int LIST_LIMIT = 100;

    private static final StringSerializer KEYS = new StringSerializer();

    private final Function<String, ReadOnlyKeyValueStore<String, ?>> stores;

    public EntityViews(Function<String, ReadOnlyKeyValueStore<String, ?>> stores) {
        this.stores = stores;
    }

    @SuppressWarnings("unchecked")
    private <V> ReadOnlyKeyValueStore<String, V> store(String name) {
        return (ReadOnlyKeyValueStore<String, V>) stores.apply(name);
    }

    /**
     * The ids of the resolved entities a name refers to: by their own names (loosely), and with {@code aliases} also
     * by the aliases extractors declared for them.
     */
    Set<String> resolvedIds(String ns, String name, boolean aliases) {
        String normalized = EntityNames.normalize(name);
        Set<String> canonicals = new TreeSet<>();
        if (!normalized.isEmpty()) {
            ReadOnlyKeyValueStore<String, EntityRecord> entities = store(StateStores.MEMORY_ENTITIES.name());
            for (String key : List.of(BlockKeys.name(normalized), BlockKeys.loose(EntityNames.loose(normalized)))) {
                for (String sid : scanLast(StateStores.MEMORY_ENTITY_INDEX.name(), Keys.prefix(ns, key), 1000)) {
                    EntityRecord e = entities.get(Keys.of(ns, sid));
                    if (e != null
                            && (aliases || EntityNames.loose(e.normalized()).equals(EntityNames.loose(normalized)))) {
                        canonicals.add(e.canonical());
                    }
                }
            }
        }
        return canonicals;
    }

    /** Resolved entities a name (or one of their aliases, or its loose form) refers to. */
    Map<String, Object> byName(String ns, String name) {
        List<Map<String, Object>> found = new ArrayList<>();
        for (String canonical : resolvedIds(ns, name, true)) {
            Map<String, Object> view = byId(ns, canonical);
            if (view != null) {
                found.add(view);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("name", name);
        out.put("entities", found);
        return out;
    }

    /** The resolved entity that holds this surface id, or null. */
    public Map<String, Object> byId(String ns, String id) {
        ReadOnlyKeyValueStore<String, EntityRecord> entities = store(StateStores.MEMORY_ENTITIES.name());
        EntityRecord start = entities.get(Keys.of(ns, id));
        if (start == null) {
            return null;
        }
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
        List<Map<String, Object>> surfaceViews = new ArrayList<>();
        for (EntityRecord e : surfaces) {
            mentions += e.mentions();
            names.add(e.normalized());
            names.addAll(e.aliases().keySet());
            if (!e.name().equals(main.name())) {
                aliases.add(e.name());
            }
            e.forms().keySet().stream().filter(f -> !f.equals(main.name())).forEach(aliases::add);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("id", e.id());
            s.put("name", e.name());
            s.put("type", e.type());
            s.put("mentions", e.mentions());
            s.put("passages", e.passages());
            s.put("description", e.description());
            surfaceViews.add(s);
        }

        ReadOnlyKeyValueStore<String, StoredPassage> passages = store(StateStores.MEMORY_PASSAGES.name());
        ReadOnlyKeyValueStore<String, MentionRecord> links = store(StateStores.MEMORY_ENTITY_PASSAGES.name());
        List<Map<String, Object>> provenance = new ArrayList<>();
        List<Map<String, Object>> facts = new ArrayList<>();
        Set<String> passageIds = new TreeSet<>();
        int factTotal = 0;
        for (EntityRecord e : surfaces) {
            try (KeyValueIterator<String, MentionRecord> it = links.prefixScan(Keys.prefix(ns, e.id()), KEYS)) {
                while (it.hasNext()) {
                    KeyValue<String, MentionRecord> kv = it.next();
                    String passageId = Keys.last(kv.key);
                    MentionRecord m = kv.value;
                    // declared aliases as the extractor wrote them (records from before written forms were kept
                    // have the normalized ones only)
                    (m.aliasForms().isEmpty() ? m.aliases() : m.aliasForms())
                            .stream().filter(a -> !a.equals(main.name())).forEach(aliases::add);
                    if (provenance.size() < LIST_LIMIT) {
                        Map<String, Object> p = new LinkedHashMap<>();
                        p.put("passage_id", passageId);
                        p.put("document_id", m.documentId());
                        p.put("surface_id", e.id());
                        p.put("form", m.form());
                        p.put("mentions", m.mentions());
                        p.put("spans", m.spans());
                        p.put("extractor", m.extractor());
                        p.put("operation", m.operation());
                        p.put("at", m.at());
                        provenance.add(p);
                    }
                    if (!passageIds.add(passageId)) {
                        continue;
                    }
                    StoredPassage stored = passages.get(Keys.of(ns, passageId));
                    if (stored == null) {
                        continue;
                    }
                    for (Extraction.Fact f : stored.extraction().facts()) {
                        if (!names.contains(EntityNames.normalize(f.head()))
                                && !names.contains(EntityNames.normalize(f.tail()))) {
                            continue;
                        }
                        factTotal++;
                        if (facts.size() < LIST_LIMIT) {
                            Map<String, Object> fact = new LinkedHashMap<>();
                            fact.put("head", f.head());
                            fact.put("relation", f.relation());
                            fact.put("tail", f.tail());
                            fact.put("evidence", f.evidence());
                            fact.put("confidence", f.confidence());
                            fact.put("passage_id", passageId);
                            fact.put("document_id", stored.documentId());
                            fact.put("extractor", stored.extraction().extractor());
                            facts.add(fact);
                        }
                    }
                }
            }
        }
        List<Map<String, Object>> decisions = new ArrayList<>();
        for (EntityRecord e : surfaces) {
            for (PairDecision d : pairsOf(ns, e.id())) {
                if (decisions.size() < LIST_LIMIT) {
                    decisions.add(decisionView(ns, d));
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", start.canonical());
        out.put("name", main.name());
        out.put("type", type);
        out.put("aliases", List.copyOf(aliases));
        out.put("description", main.description());
        out.put("mentions", mentions);
        out.put("passage_count", passageIds.size());
        out.put("surfaces", surfaceViews);
        out.put("passages", provenance);
        out.put("fact_count", factTotal);
        out.put("facts", facts);
        out.put("decisions", decisions);
        return out;
    }

    /** Resolved entities that group more than one surface, with the merge decisions that made each group. */
    Map<String, Object> merges(String ns, int limit) {
        ReadOnlyKeyValueStore<String, String> members = store(StateStores.MEMORY_ENTITY_MEMBERS.name());
        Map<String, List<String>> groups = new TreeMap<>();
        try (KeyValueIterator<String, String> it = members.prefixScan(Keys.prefix(ns), KEYS)) {
            while (it.hasNext()) {
                String key = it.next().key;
                String[] parts = key.split(String.valueOf(Keys.SEPARATOR));
                groups.computeIfAbsent(parts[1], k -> new ArrayList<>()).add(parts[2]);
            }
        }
        ReadOnlyKeyValueStore<String, EntityRecord> entities = store(StateStores.MEMORY_ENTITIES.name());
        List<Map<String, Object>> out = new ArrayList<>();
        long total = 0;
        for (Map.Entry<String, List<String>> g : groups.entrySet()) {
            if (g.getValue().size() < 2) {
                continue;
            }
            total++;
            if (out.size() >= limit) {
                continue;
            }
            Set<String> inGroup = new TreeSet<>(g.getValue());
            List<Map<String, Object>> surfaces = new ArrayList<>();
            List<Map<String, Object>> decisions = new ArrayList<>();
            for (String sid : g.getValue()) {
                EntityRecord e = entities.get(Keys.of(ns, sid));
                if (e == null) {
                    continue;
                }
                surfaces.add(Map.of("id", e.id(), "name", e.name(), "type", e.type(), "mentions", e.mentions()));
                for (PairDecision d : pairsOf(ns, sid)) {
                    if (d.decision() == PairDecision.Kind.MERGE
                            && inGroup.contains(d.otherId())
                            && d.entityId().compareTo(d.otherId()) < 0) {
                        decisions.add(decisionView(ns, d));
                    }
                }
            }
            Map<String, Object> group = new LinkedHashMap<>();
            group.put("id", g.getKey());
            group.put("surfaces", surfaces);
            group.put("decisions", decisions);
            out.add(group);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("namespace", ns);
        result.put("total", total);
        result.put("merges", out);
        return result;
    }

    /** Pairs waiting for a person (review) or for more evidence (defer). */
    Map<String, Object> pendingPairs(String ns, int limit) {
        List<Map<String, Object>> out = new ArrayList<>();
        long total = 0;
        ReadOnlyKeyValueStore<String, PairDecision> pairs = store(StateStores.MEMORY_ENTITY_PAIRS.name());
        try (KeyValueIterator<String, PairDecision> it = pairs.prefixScan(Keys.prefix(ns), KEYS)) {
            while (it.hasNext()) {
                PairDecision d = it.next().value;
                boolean pending = d.decision() == PairDecision.Kind.REVIEW || d.decision() == PairDecision.Kind.DEFER;
                if (!pending || d.entityId().compareTo(d.otherId()) > 0) {
                    continue;
                }
                total++;
                if (out.size() < limit) {
                    out.add(decisionView(ns, d));
                }
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("total", total);
        result.put("pairs", out);
        return result;
    }

    private Map<String, Object> decisionView(String ns, PairDecision d) {
        ReadOnlyKeyValueStore<String, EntityRecord> entities = store(StateStores.MEMORY_ENTITIES.name());
        EntityRecord a = entities.get(Keys.of(ns, d.entityId()));
        EntityRecord b = entities.get(Keys.of(ns, d.otherId()));
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("entity_id", d.entityId());
        v.put("entity_name", a == null ? null : a.name());
        v.put("other_id", d.otherId());
        v.put("other_name", b == null ? null : b.name());
        v.put("decision", d.decision());
        v.put("rule", d.rule());
        v.put("score", d.score());
        v.put("evidence", d.evidence());
        v.put("at", d.at());
        return v;
    }

    private List<PairDecision> pairsOf(String ns, String sid) {
        List<PairDecision> out = new ArrayList<>();
        ReadOnlyKeyValueStore<String, PairDecision> pairs = store(StateStores.MEMORY_ENTITY_PAIRS.name());
        try (KeyValueIterator<String, PairDecision> it = pairs.prefixScan(Keys.prefix(ns, sid), KEYS)) {
            it.forEachRemaining(kv -> out.add(kv.value));
        }
        return out;
    }

    private List<EntityRecord> members(String ns, String canonical) {
        ReadOnlyKeyValueStore<String, EntityRecord> entities = store(StateStores.MEMORY_ENTITIES.name());
        List<EntityRecord> out = new ArrayList<>();
        for (String sid :
                scanLast(StateStores.MEMORY_ENTITY_MEMBERS.name(), Keys.prefix(ns, canonical), Integer.MAX_VALUE)) {
            EntityRecord e = entities.get(Keys.of(ns, sid));
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }

    private List<String> scanLast(String storeName, String prefix, int limit) {
        ReadOnlyKeyValueStore<String, ?> s = store(storeName);
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, ?> it = s.prefixScan(prefix, KEYS)) {
            while (it.hasNext() && out.size() < limit) {
                out.add(Keys.last(it.next().key));
            }
        }
        return out;
    }
}
