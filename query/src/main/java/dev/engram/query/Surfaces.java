package dev.engram.query;

import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.schemas.EntityType;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryReader;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A namespace's surface entities as memory resolves them, kept from build to build: a build reads again only the
 * surfaces that changed, and names again only the resolved entities they left or joined.
 *
 * <p>One slot per surface id holds what a snapshot needs of the surface, and is where the kept passages' mentions of
 * it find its resolution without a lookup. A namespace has about as many surfaces as its passages have distinct
 * mentions, so a surface costs one map entry, one slot and its group's reference to it; its id is one string, which
 * the mentions of it share ({@link #id}).
 */
final class Surfaces {

    /**
     * Per surface id: its slot. A surface that left memory (or that a kept passage mentions before it is read) keeps
     * an empty slot, since a kept passage may hold it, until the surfaces start afresh ({@link #outgrown}).
     */
    private final Map<String, Slot> byId = new HashMap<>();

    /** Slots of surfaces in memory now. */
    private int present;

    /** Where a mention finds its surface's resolution. Only the namespace's build reads and writes it. */
    static final class Slot {
        final String id;
        /** The surface's resolved entity as memory holds it now; null: no such surface in memory (yet or any more). */
        Resolution resolution;
        /**
         * The group of the resolved entity this surface's id names, or null: a group is found by the slot of its
         * canonical surface instead of a map of its own (a namespace has about as many groups as surfaces).
         */
        private Resolution group;

        private int mentions;
        private String name;

        private Slot(String id) {
            this.id = id;
        }
    }

    /** The slot of a surface id, made when first asked for. */
    Slot slot(String surfaceId) {
        return byId.computeIfAbsent(surfaceId, Slot::new);
    }

    /**
     * The one string a surface's id is kept as ({@code surfaceId} itself when it has no slot yet): what kept
     * passages hold, so that a namespace holds each id once rather than once per mention.
     */
    String id(String surfaceId) {
        Slot slot = byId.get(surfaceId);
        return slot == null ? surfaceId : slot.id;
    }

    /** Whether slots of surfaces that left outnumber the surfaces: then the loader reads the namespace afresh. */
    boolean outgrown() {
        return byId.size() > 2L * present + 50_000;
    }

    /** Every surface of the namespace. */
    static Surfaces read(String ns, MemoryReader memory) {
        Surfaces out = new Surfaces();
        memory.forEachEntity(ns, e -> out.join(out.slot(e.id()), e));
        out.byId.values().forEach(slot -> {
            if (slot.group != null) {
                slot.group.name();
            }
        });
        return out;
    }

    /** Reads the surfaces {@code ids} again (those no longer in memory leave). */
    void update(String ns, Set<String> ids, MemoryReader memory) {
        Set<Resolution> touched = Collections.newSetFromMap(new IdentityHashMap<>());
        for (String id : ids) {
            Slot slot = byId.get(id);
            if (slot != null && slot.resolution != null) {
                touched.add(slot.resolution);
                slot.resolution.remove(slot);
                slot.resolution = null; // until it is read again below, or for good when it left
                present--;
            }
            memory.entity(ns, id).ifPresent(e -> {
                Slot s = slot != null ? slot : slot(id);
                join(s, e);
                touched.add(s.resolution);
            });
        }
        for (Resolution r : touched) {
            if (r.size == 0) {
                Slot canonical = byId.get(r.canonical);
                if (canonical != null && canonical.group == r) {
                    canonical.group = null;
                }
            } else {
                r.name();
            }
        }
    }

    /** The surface of {@code slot} is in memory as {@code e}: it joins its resolved entity's group. */
    private void join(Slot slot, EntityRecord e) {
        slot.mentions = e.mentions();
        slot.name = e.name();
        // the resolved entity's id is its smallest surface's id: its group hangs on that surface's slot, and is known
        // by the slot's one string
        Slot canonical = slot(e.canonical());
        Resolution r = canonical.group;
        if (r == null) {
            r = new Resolution(canonical.id);
            canonical.group = r;
        }
        r.add(slot);
        slot.resolution = r;
        present++;
    }

    /** Surfaces in memory now. */
    int size() {
        return present;
    }

    /**
     * A resolved entity: its id, its name (its most mentioned surface's, the first in id order of equally mentioned),
     * and its surfaces.
     */
    static final class Resolution {
        private static final Slot[] NONE = new Slot[0];

        final String canonical;
        String name;

        private Slot[] members = NONE;
        private int size;
        /**
         * The build that last declared the entity and its index there: a build declares each resolved entity once,
         * and its other mentions take the index from here instead of a lookup by id. Only the namespace's build reads
         * and writes them, under its lock.
         */
        private long build;

        private int entity;

        /** An entity of one surface, {@code canonical}, named {@code name}, that no group holds. */
        Resolution(String canonical, String name) {
            this.canonical = canonical;
            this.name = name;
        }

        private Resolution(String canonical) {
            this(canonical, null);
        }

        private void add(Slot slot) {
            if (size == members.length) {
                members = Arrays.copyOf(members, Math.max(1, 2 * size));
            }
            members[size++] = slot;
        }

        private void remove(Slot slot) {
            for (int i = 0; i < size; i++) {
                if (members[i] == slot) {
                    members[i] = members[--size];
                    members[size] = null;
                    return;
                }
            }
        }

        /** Names the entity after its most mentioned surface, the first in id order of equally mentioned. */
        private void name() {
            Slot best = null;
            for (int i = 0; i < size; i++) {
                Slot s = members[i];
                if (best == null
                        || s.mentions > best.mentions
                        || (s.mentions == best.mentions && s.id.compareTo(best.id) < 0)) {
                    best = s;
                }
            }
            name = best == null ? null : best.name;
        }

        /** The entity's index in the snapshot of build {@code build}, declared there if not yet. */
        int entity(MemoryGraphBuilder b, long build, EntityType type) {
            if (this.build != build) {
                entity = b.entity(canonical, name, type);
                this.build = build;
            }
            return entity;
        }
    }
}
