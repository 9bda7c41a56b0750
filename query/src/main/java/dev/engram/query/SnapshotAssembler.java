package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.retrieval.TermCache;
import dev.engram.retrieval.VectorArena;
import dev.engram.retrieval.VectorIndexer;
import dev.engram.stores.EntityNames;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.ThemeSet;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles a namespace's {@link MemoryGraph} from the state stores, reading only what changed since its previous
 * snapshot: it keeps, per namespace, the parts of the passages and the surface entities that build read. The caller
 * runs one build at a time per namespace (under the namespace's lock).
 */
final class SnapshotAssembler {

    /** Logged under the loader's name, as the snapshots it assembles. */
    private static final Logger LOG = LoggerFactory.getLogger(GraphLoader.class);

    /** Snapshots assembled: each build's stamp (see {@link Surfaces.Resolution}). */
    private final AtomicLong builds = new AtomicLong();

    private final ConcurrentHashMap<String, Parts> parts = new ConcurrentHashMap<>();
    /** Moves on each time kept parts are forgotten: a build that began before keeps nothing of what it read. */
    private final AtomicLong keptEpoch = new AtomicLong();

    /**
     * The share of an arena's values no longer used (their passages changed or went) past which a build copies the
     * used ones into a new arena, so that a namespace written for long holds about twice its vectors at most.
     */
    private static final double COMPACT_GARBAGE = 0.5;

    private final Meters meters;
    private final VectorIndexes vectors;
    /** A new, empty arena for a namespace's vectors. */
    private final Function<String, VectorArena> arenaFactory;
    /** Whether the loader is closing: a build then keeps nothing, and its snapshot's vectors are searched exactly. */
    private final BooleanSupplier closed;
    /** The model of the query embedder; passages embedded by another are left out of snapshots (null: none are). */
    private final String embedder;
    /**
     * Per namespace, the arena its kept parts' vectors are in. Changed only by a build or a drop, under the
     * namespace's lock: an arena forgotten with its parts is closed by the next build, which starts a new one.
     */
    private final Map<String, VectorArena> arenas = new ConcurrentHashMap<>();

    /** Per namespace, the last arena whose spill to the heap was logged. */
    private final Map<String, VectorArena> spilledLogged = new ConcurrentHashMap<>();

    /** Per namespace, how many passages of another model its last snapshot left out, as last logged. */
    private final Map<String, Long> otherModelLogged = new ConcurrentHashMap<>();

    /** Arenas of fewer values than this are not compacted: there is little to win. */
    private final long compactFloats;

    SnapshotAssembler(
            String embedder, long compactBytes, VectorIndexes vectors, Meters meters, BooleanSupplier closed) {
        this.compactFloats = compactBytes / Float.BYTES;
        this.arenaFactory = vectors::newArena;
        this.embedder = embedder;
        this.vectors = vectors;
        this.meters = meters;
        this.closed = closed;
    }

    /** The current epoch of kept parts: a build that began at another keeps nothing of what it read. */
    long epoch() {
        return keptEpoch.get();
    }

    /** Forgets the parts kept for the namespaces {@code which} accepts, and moves the epoch on. */
    void forget(Predicate<String> which) {
        keptEpoch.incrementAndGet();
        parts.keySet().removeIf(which);
    }

    /**
     * Drops the parts kept for a namespace, and their arena: its next build reads it whole. Under the namespace's
     * lock; a snapshot still served goes on reading the arena's values until it is let go of.
     */
    void drop(String ns) {
        parts.remove(ns);
        spilledLogged.remove(ns);
        VectorArena arena = arenas.remove(ns);
        if (arena != null) {
            close(ns, arena);
        }
    }

    /** Drops the parts kept for every namespace, and their arenas. */
    void dropAll() {
        parts.clear();
        for (String ns : Set.copyOf(arenas.keySet())) {
            drop(ns);
        }
    }

    /** Bytes of values in the namespaces' arenas, used and retired. */
    long arenaBytes() {
        return arenas.values().stream().mapToLong(a -> Float.BYTES * a.floats()).sum();
    }

    /** Heap the parts kept for a namespace hold beyond its snapshot, about (0: none are kept). */
    long keptBytes(String ns) {
        Parts kept = parts.get(ns);
        return kept == null ? 0 : extraBytes(kept);
    }

    /**
     * The parts of a namespace's passages as its last snapshot read them, by passage id in id order (the order of the
     * passages store), its surface entities, and the version they hold memory at. Only the build of the namespace,
     * under its lock, reads and changes them; a build that fails drops them.
     */
    private record Parts(
            long version, TreeMap<String, Kept> byId, Surfaces surfaces, TermCache terms, VectorArena arena) {}

    /**
     * A passage's part, and the slot of each of its mentions' surfaces (in the order of its mentions): what a build
     * resolves a mention by without looking its surface up.
     */
    private record Kept(PassagePart part, Surfaces.Slot[] slots) {

        static Kept of(PassagePart part, Surfaces surfaces) {
            Surfaces.Slot[] slots = new Surfaces.Slot[part.mentions().size()];
            for (int i = 0; i < slots.length; i++) {
                slots[i] = surfaces.slot(part.mentions().surfaceId(i));
            }
            return new Kept(part, slots);
        }
    }

    /**
     * A build reads every passage and surface when nothing is kept, or when the namespace's log does not reach back to
     * the kept version; otherwise it reads only the passages and surfaces the log says changed since.
     */
    MemoryGraph build(String ns, NamespaceState state, MemoryReader memory) {
        long epoch = keptEpoch.get();
        // the version as memory holds it now, read after the epoch: lower than the caller's when memory was rolled back
        // since (the caller read a transaction's state before it was aborted), and then what is read is that older one
        long version = memory.namespace(ns).map(NamespaceState::version).orElse(state.version());
        Parts last = parts.get(ns);
        if (last != null && last.version() > version) {
            last = null; // memory went back (its stores were restored to an earlier point): nothing kept is trusted
        }
        if (last != null && last.surfaces().outgrown()) {
            last = null; // slots of surfaces long gone: start afresh
        }
        MemoryReader.Changed changed = last == null
                ? null
                : memory.changed(ns, last.version(), version).orElse(null);
        // a whole read starts a new arena; the one it replaces is closed once the build is done
        VectorArena arena = changed != null ? last.arena() : arenaFactory.apply(ns);
        // names repeat across passages: normalize each once per build
        Map<String, String> normalized = new HashMap<>();
        Function<String, String> normalize = name -> normalized.computeIfAbsent(name, EntityNames::normalize);
        long read = 0;
        Parts next;
        try {
            if (changed != null) {
                // what is read is at least as new as the log says: a write under way is read again at the next build
                Surfaces surfaces = last.surfaces();
                for (String id : changed.passages()) {
                    Kept gone = last.byId().remove(id);
                    if (gone != null) {
                        gone.part().retire(arena);
                    }
                    PassagePart part = memory.passage(ns, id)
                            .map(p -> read(ns, p, version, memory, normalize, surfaces::id, arena))
                            .orElse(null);
                    if (part != null) {
                        last.byId().put(id, Kept.of(part, surfaces));
                        read += part.passage() == null ? 0 : 1;
                    }
                }
                surfaces.update(ns, changed.surfaces(), memory);
                next = compacted(ns, new Parts(version, last.byId(), surfaces, last.terms(), arena));
            } else {
                TreeMap<String, Kept> byId = new TreeMap<>();
                Surfaces surfaces = Surfaces.read(ns, memory);
                long[] whole = {0};
                memory.forEachPassage(ns, p -> {
                    PassagePart part = read(ns, p, version, memory, normalize, surfaces::id, arena);
                    if (part != null) {
                        byId.put(p.passageId(), Kept.of(part, surfaces));
                        whole[0] += part.passage() == null ? 0 : 1;
                    }
                });
                read = whole[0];
                next = new Parts(version, byId, surfaces, last == null ? new TermCache() : last.terms(), arena);
            }
        } catch (RuntimeException | Error e) {
            parts.remove(ns); // changed part of the way: not to be trusted
            if (changed == null) {
                close(ns, arena);
            }
            throw e;
        }
        if (closed.getAsBoolean()) {
            // the loader is closing and drops the arenas it knows: a new one is served to this build's caller only
            if (arenas.get(ns) != next.arena()) {
                close(ns, next.arena());
            }
        } else {
            VectorArena previous = arenas.put(ns, next.arena());
            if (previous != null && previous != next.arena()) {
                close(ns, previous); // the snapshot still served reads on from its mapped pages until it is let go of
            }
        }
        IOException spilled = next.arena().spilled();
        if (spilled != null && spilledLogged.put(ns, next.arena()) != next.arena()) {
            LOG.warn(
                    "namespace {}: the file of its snapshot vectors could not grow, new ones are kept in the heap: {}",
                    ns,
                    spilled.toString());
        }
        List<Kept> ordered = new ArrayList<>(next.byId().values());
        MemoryGraph g;
        try {
            g = assemble(ns, version, ordered, next.terms(), next.arena(), memory, indexer(ns), true);
        } catch (RuntimeException | Error e) {
            parts.remove(ns);
            throw e;
        }
        long inSnapshot =
                ordered.stream().filter(k -> k.part().passage() != null).count();
        meters.snapshotPassages(read, inSnapshot - read);
        if (!closed.getAsBoolean() && keptEpoch.get() == epoch) {
            parts.put(ns, next);
            if (keptEpoch.get() != epoch) {
                parts.remove(ns); // forgotten meanwhile
            }
        }
        return g;
    }

    /**
     * The kept parts, with their vectors copied into a new arena when most of their arena's values are no longer used;
     * the old arena is closed by the caller once the new one is in place.
     */
    private Parts compacted(String ns, Parts kept) {
        VectorArena from = kept.arena();
        if (from.floats() < compactFloats || from.garbage() < COMPACT_GARBAGE) {
            return kept;
        }
        VectorArena to = arenaFactory.apply(ns);
        // into a new map, which replaces the kept one only once every part is moved: a failure part of the way (an
        // error of the disk, a full heap) leaves the kept parts all in the old arena
        TreeMap<String, Kept> moved = new TreeMap<>();
        try {
            for (Map.Entry<String, Kept> e : kept.byId().entrySet()) {
                moved.put(
                        e.getKey(),
                        new Kept(
                                e.getValue().part().movedTo(from, to),
                                e.getValue().slots()));
            }
            kept.terms().movedTo(from, to);
        } catch (RuntimeException | Error e) {
            close(ns, to);
            throw e;
        }
        LOG.debug("namespace {}: vectors compacted, {} of {} values kept", ns, to.floats(), from.floats());
        return new Parts(kept.version(), moved, kept.surfaces(), kept.terms(), to);
    }

    /** Closes an arena no longer used; its file is deleted, or cleared at the next start if it cannot be now. */
    private static void close(String ns, VectorArena arena) {
        arena.close();
        if (arena.deleteFailed() != null) {
            LOG.debug("namespace {}: an arena's file is left until the next start: {}", ns, arena.deleteFailed());
        }
    }

    /** Heap the kept parts of a namespace hold beyond its snapshot, about. */
    private static long extraBytes(Parts kept) {
        long extra = 160L * kept.surfaces().size() + kept.terms().bytes();
        for (Kept k : kept.byId().values()) {
            extra += k.part().extraBytes() + 8L * k.slots().length;
        }
        return extra;
    }

    /**
     * The part of a passage read from the stores; null when its vector is not there (written since, or deleted). A
     * passage another model embedded is left out of snapshots: its part holds only its version and model.
     */
    private PassagePart read(
            String ns,
            StoredPassage p,
            long version,
            MemoryReader memory,
            Function<String, String> normalize,
            Function<String, String> surfaceIds,
            VectorArena arena) {
        if (otherModel(p.embedder())) {
            return PassagePart.otherModel(version, p.embedder());
        }
        float[] vector = memory.passageVector(ns, p.passageId());
        if (vector == null) {
            return null; // written between the two reads; the next snapshot has it
        }
        return PassagePart.of(version, p, vector, memory.embeddings(ns, p.passageId()), normalize, surfaceIds, arena);
    }

    /** Whether vectors of {@code model} are not comparable with the query's (null: not known, taken as comparable). */
    private boolean otherModel(String model) {
        return embedder != null && model != null && !embedder.equals(model);
    }

    /**
     * The entities of a relation's members, given as positions among the passage's mentions, each once and in order:
     * two mentions of one resolved entity are one member.
     */
    private static int[] members(int[] mentions, int[] entityOf) {
        int[] out = new int[mentions.length];
        int n = 0;
        for (int m : mentions) {
            int e = entityOf[m];
            boolean seen = false;
            for (int i = 0; i < n && !seen; i++) {
                seen = out[i] == e;
            }
            if (!seen) {
                out[n++] = e;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /**
     * A small snapshot of only the passages memory changed after version {@code since}, read afresh from the stores
     * without touching what the namespace's whole builds keep: what a query reads beside the whole snapshot of
     * {@code since} while the next one is built (see {@link GraphLoader}), with the ids of every passage changed since
     * (those that left, or whose vector is not there yet, included: the whole snapshot's copies of them are stale). Its
     * vectors are on the heap and searched exactly; the surfaces its passages mention are read for it alone, so an
     * entity it names is named after the surfaces of it these passages mention. Its version is memory's now, or
     * {@code upTo} when that is lower (the version the caller read, which its answers' watermark gives). Null when
     * memory is not past {@code since}, when the namespace's log does not reach back to it, or when more than
     * {@code limit} passages changed since (the whole build is then the quicker way to them).
     */
    GraphLoader.RecentRead recent(String ns, long since, long upTo, MemoryReader memory, int limit) {
        long version =
                Math.min(upTo, memory.namespace(ns).map(NamespaceState::version).orElse(since));
        if (version <= since) {
            return null;
        }
        MemoryReader.Changed changed = memory.changed(ns, since, version).orElse(null);
        if (changed == null || changed.passages().size() > limit) {
            return null;
        }
        VectorArena arena = VectorArena.onHeap();
        Map<String, String> normalized = new HashMap<>();
        Function<String, String> normalize = name -> normalized.computeIfAbsent(name, EntityNames::normalize);
        TreeMap<String, PassagePart> read = new TreeMap<>();
        Set<String> mentioned = new HashSet<>();
        for (String id : changed.passages()) {
            PassagePart part = memory.passage(ns, id)
                    .map(p -> read(ns, p, version, memory, normalize, Function.identity(), arena))
                    .orElse(null);
            if (part != null) {
                read.put(id, part);
                for (int i = 0; i < part.mentions().size(); i++) {
                    mentioned.add(part.mentions().surfaceId(i));
                }
            }
        }
        Surfaces surfaces = new Surfaces();
        surfaces.update(ns, mentioned, memory);
        List<Kept> ordered = new ArrayList<>(read.size());
        for (PassagePart part : read.values()) {
            ordered.add(Kept.of(part, surfaces));
        }
        MemoryGraph g = assemble(ns, version, ordered, new TermCache(), arena, memory, VectorIndexer.EXACT, false);
        return new GraphLoader.RecentRead(g, Set.copyOf(changed.passages()));
    }

    /** How a whole snapshot of the namespace searches its vectors: its HNSW index, or exactly while it cannot be. */
    private VectorIndexer indexer(String ns) {
        HnswVectors hnsw = vectors.of(ns);
        return batches -> {
            if (closed.getAsBoolean()) {
                return VectorIndexer.EXACT.index(batches); // closing: its indexes are closed or about to be
            }
            try {
                return hnsw.index(batches);
            } catch (RuntimeException e) {
                meters.vectorIndexUnavailable();
                // the index cannot be written (a full disk, a lock held elsewhere): search stays exact meanwhile
                LOG.warn("vector index of namespace {} unavailable, searching exactly: {}", ns, e.toString());
                return VectorIndexer.EXACT.index(batches);
            }
        };
    }

    /**
     * A snapshot of the passages' parts, with each surface resolved as memory resolves it now; {@code whole} when it is
     * the namespace's whole snapshot (a recent layer says nothing of the passages it leaves out).
     */
    private MemoryGraph assemble(
            String ns,
            long version,
            List<Kept> ordered,
            TermCache terms,
            VectorArena arena,
            MemoryReader memory,
            VectorIndexer indexer,
            boolean whole) {
        long build = builds.incrementAndGet();
        MemoryGraphBuilder b =
                MemoryGraph.builder(version).arena(arena).terms(terms).indexer(indexer);
        long otherModel = 0;
        for (Kept kept : ordered) {
            PassagePart part = kept.part();
            if (otherModel(part.embedder())) {
                otherModel++;
                continue;
            }
            int index = b.passage(part.passage(), part.vector());
            if (part.session() != null) {
                b.session(index, part.session(), part.time());
            }
            if (part.time() != Long.MIN_VALUE) {
                b.time(index, part.time());
            }
            // each of this passage's mentions → its resolved entity's index in the graph
            PassagePart.Mentions mentions = part.mentions();
            int[] entityOf = new int[mentions.size()];
            List<String> names = null; // read from the arena only for a surface not in memory (yet)
            for (int i = 0; i < mentions.size(); i++) {
                Surfaces.Slot slot = kept.slots()[i];
                Surfaces.Resolution r = slot.resolution;
                if (r == null) {
                    names = names != null ? names : mentions.names();
                    r = new Surfaces.Resolution(slot.id, names.get(i)); // a surface written since stands for itself
                }
                int entity = r.entity(b, build, mentions.type(i));
                b.link(entity, index);
                entityOf[i] = entity;
                if (mentions.vector(i) != VectorArena.NONE) {
                    b.entityVector(entity, mentions.vector(i));
                }
            }
            for (int r = 0; r < part.relations().size(); r++) {
                int[] members = members(part.relations().get(r).members(), entityOf);
                if (members.length >= 2) {
                    part.addRelation(b, r, index, members);
                }
            }
            if (part.questions() == null) {
                continue;
            }
            b.questions(index, part.questions(), part.questionKeys());
            for (int f = 0; f < part.facts().size(); f++) {
                PassagePart.Fact x = part.facts().get(f);
                part.addFact(
                        b, f, index, x.head() < 0 ? -1 : entityOf[x.head()], x.tail() < 0 ? -1 : entityOf[x.tail()]);
            }
        }
        Long logged = whole ? otherModelLogged.put(ns, otherModel) : null;
        if (whole && otherModel > 0 && (logged == null || logged != otherModel)) {
            // snapshots are rebuilt every second or so while a namespace changes: said again only when it changes
            LOG.warn(
                    "namespace {}: {} passages were embedded by another model than {} and are left out of retrieval"
                            + " until their documents are sent again",
                    ns,
                    otherModel,
                    embedder);
        }
        memory.themes(ns).ifPresent(themes -> {
            for (ThemeSet.Theme t : themes.themes()) {
                int[] members = t.passageIds().stream()
                        .mapToInt(b::passageIndex)
                        .filter(i -> i >= 0)
                        .toArray();
                b.theme(t.rank(), t.eigenvalue(), members, t.summary());
            }
        });
        return b.build();
    }
}
