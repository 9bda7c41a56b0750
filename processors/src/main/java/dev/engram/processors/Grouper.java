package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.MemoryChange;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * CONSTRUCT for entity resolution: resolved entities are the groups that merge decisions make, rebuilt for every
 * component (over merge decisions) a record touched. Merges are made greedily in score order, so that a group never
 * holds two incompatible types (unless an operator said so) nor two surfaces kept apart by a review, defer or split
 * between them; each group is named by its smallest surface id. Every surface whose group changed gets its new
 * canonical id, its member entry, the merge or unmerge decisions and the change in the count of resolved entities.
 */
final class Grouper {

    /** The most surfaces one resolved group is rebuilt over at once. */
    static final int COMPONENT_CAP = 512;

    private final MemoryTransaction tx;

    Grouper(MemoryTransaction tx) {
        this.tx = tx;
    }

    /** Rebuilds the resolved groups of the components (over merge decisions) that contain these surfaces. */
    void regroup(Set<String> seeds) {
        Set<String> done = new LinkedHashSet<>();
        for (String seed : seeds) {
            if (done.contains(seed) || tx.entities().get(Keys.of(tx.namespace(), seed)) == null) {
                continue;
            }
            // The component: every surface reachable over merge decisions.
            Set<String> component = new TreeSet<>();
            List<PairDecision> edges = new ArrayList<>();
            Set<String> apart = new TreeSet<>();
            List<String> queue = new ArrayList<>(List.of(seed));
            component.add(seed);
            for (int q = 0; q < queue.size() && component.size() < COMPONENT_CAP; q++) {
                String x = queue.get(q);
                for (PairDecision p : PairDecider.stored(tx, x).values()) {
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
        String ns = tx.namespace();
        Map<String, EntityRecord> records = new TreeMap<>();
        for (String sid : component) {
            EntityRecord e = tx.entities().get(Keys.of(ns, sid));
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
            tx.members().delete(Keys.of(ns, e.canonical(), e.id()));
            tx.members().put(Keys.of(ns, canonical, e.id()), e.normalized());
            boolean wasMerged = e.merged();
            boolean isMerged = !canonical.equals(e.id());
            tx.counts(0, 0, (wasMerged ? 1 : 0) - (isMerged ? 1 : 0), 0);
            if (wasMerged) {
                tx.decision(MemoryChange.EntityDecision.Kind.UNMERGE, e.id(), e.canonical(), "regrouped", 1, List.of());
            }
            if (isMerged) {
                PairDecision why = joinedBy.get(e.id());
                tx.decision(
                        MemoryChange.EntityDecision.Kind.MERGE,
                        e.id(),
                        canonical,
                        why == null ? "group" : why.rule(),
                        why == null ? 1 : why.score(),
                        why == null ? List.of() : why.evidence());
            }
            tx.entities().put(Keys.of(ns, e.id()), e.withCanonical(canonical));
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
}
