package dev.engram.query;

import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.schemas.EntityType;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.MemoryReader;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A namespace's surface entities as memory resolves them, kept from build to build: a build reads again only the
 * surfaces that changed, and names again only the resolved entities they left or joined.
 */
final class Surfaces {

    private final Map<String, Surface> byId = new HashMap<>();
    /** Resolved entity → its surfaces, in id order: the first of equally mentioned surfaces names the entity. */
    private final Map<String, TreeSet<String>> members = new HashMap<>();

    private final Map<String, Resolution> byCanonical = new HashMap<>();

    /**
     * Per surface id any kept passage mentions, its resolution as it is now (null: no such surface), kept up to
     * date as surfaces change, so that a build resolves a mention without a lookup. A surface that leaves keeps
     * its slot (a kept passage may hold it) until the surfaces start afresh.
     */
    private final Map<String, Slot> slots = new HashMap<>();

    /** Where a mention finds its surface's resolution. Only the namespace's build reads and writes it. */
    static final class Slot {
        Resolution resolution;
    }

    /** The slot of a surface id, made when first asked for. */
    Slot slot(String surfaceId) {
        return slots.computeIfAbsent(surfaceId, id -> {
            Slot slot = new Slot();
            Surface s = byId.get(id);
            slot.resolution = s == null ? null : byCanonical.get(s.canonical());
            return slot;
        });
    }

    /** Whether slots of surfaces that left outnumber the surfaces: then the loader reads the namespace afresh. */
    boolean outgrown() {
        return slots.size() > 2L * byId.size() + 50_000;
    }

    /** Every surface of the namespace. */
    static Surfaces read(String ns, MemoryReader memory) {
        Surfaces out = new Surfaces();
        memory.forEachEntity(ns, e -> out.add(e.id(), Surface.of(e)));
        Set.copyOf(out.members.keySet()).forEach(out::name);
        return out;
    }

    /** Reads the surfaces {@code ids} again (those no longer in memory leave). */
    void update(String ns, Set<String> ids, MemoryReader memory) {
        Set<String> touched = new HashSet<>();
        for (String id : ids) {
            Surface old = byId.remove(id);
            if (old != null) {
                members.get(old.canonical()).remove(id);
                touched.add(old.canonical());
            }
            Slot slot = slots.get(id);
            if (slot != null) {
                slot.resolution = null; // until it is read again below, or for good when it left
            }
            memory.entity(ns, id).ifPresent(e -> {
                Surface now = Surface.of(e);
                add(id, now);
                touched.add(now.canonical());
            });
        }
        touched.forEach(this::name);
    }

    private void add(String id, Surface s) {
        byId.put(id, s);
        members.computeIfAbsent(s.canonical(), c -> new TreeSet<>()).add(id);
    }

    /** Names a resolved entity after its most mentioned surface (the first in id order of equally mentioned). */
    private void name(String canonical) {
        TreeSet<String> ids = members.get(canonical);
        if (ids == null || ids.isEmpty()) {
            members.remove(canonical);
            byCanonical.remove(canonical);
            return;
        }
        Surface best = null;
        for (String id : ids) {
            Surface s = byId.get(id);
            if (best == null || s.mentions() > best.mentions()) {
                best = s;
            }
        }
        Resolution r = new Resolution(canonical, best.name());
        byCanonical.put(canonical, r);
        for (String id : ids) {
            Slot slot = slots.get(id);
            if (slot != null) {
                slot.resolution = r;
            }
        }
    }

    int size() {
        return byId.size();
    }

    /** What a snapshot needs of one surface entity: its resolved entity, its mentions and its name. */
    private record Surface(String canonical, int mentions, String name) {

        static Surface of(EntityRecord e) {
            return new Surface(e.canonical(), e.mentions(), e.name());
        }
    }

    /** The resolved entity of a surface, and that entity's name (its most mentioned surface's). */
    static final class Resolution {
        final String canonical;
        final String name;
        /**
         * The build that last declared the entity and its index there: a build declares each resolved entity once,
         * and its other mentions take the index from here instead of a lookup by id. Only the namespace's build reads
         * and writes them, under its lock.
         */
        private long build;

        private int entity;

        Resolution(String canonical, String name) {
            this.canonical = canonical;
            this.name = name;
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
