package dev.engram.understanding.llm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Permits for calls to a shared model, shared fairly between tenants (namespaces). A tenant alone may use every permit;
 * when tenants wait, each permit given back goes to the waiting tenant that holds the fewest — among equals the one
 * served least recently, then the call that has waited longest — so a tenant with a thousand calls queued cannot hold up another's one call for longer than a
 * call takes. The tenant of a call is the one the calling thread works for (see {@link #as}); calls made outside any
 * share one tenant of their own.
 *
 * <p>Locks, not monitors: the callers are virtual threads, which a monitor wait would pin to their carrier.
 */
public final class FairPermits {

    /** The tenant of calls made by a thread that works for none. */
    public static final String NO_TENANT = "";

    private static final ThreadLocal<String> TENANT = new ThreadLocal<>();

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Integer> held = new HashMap<>();
    /** When each tenant that holds or waits was last given a permit (in grants): the turns go round. */
    private final Map<String, Long> served = new HashMap<>();

    private final List<Waiter> waiting = new ArrayList<>();
    private int free;
    private long arrivals;
    private long grants;

    private static final class Waiter {
        final String tenant;
        final long arrival;
        final Condition granted;
        boolean given;

        Waiter(String tenant, long arrival, Condition granted) {
            this.tenant = tenant;
            this.arrival = arrival;
            this.granted = granted;
        }
    }

    public FairPermits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be positive");
        }
        this.free = permits;
    }

    /** Runs {@code work} on this thread as {@code tenant}'s: the calls it makes share that tenant's permits. */
    public static <T> T as(String tenant, Supplier<T> work) {
        String before = TENANT.get();
        TENANT.set(Objects.requireNonNull(tenant, "tenant"));
        try {
            return work.get();
        } finally {
            if (before == null) {
                TENANT.remove();
            } else {
                TENANT.set(before);
            }
        }
    }

    /** The tenant this thread works for, or {@link #NO_TENANT}. */
    public static String tenant() {
        String t = TENANT.get();
        return t == null ? NO_TENANT : t;
    }

    /** Takes a permit for the current thread's tenant, waiting for its turn; returns the tenant to release for. */
    public String acquire() throws InterruptedException {
        String tenant = tenant();
        lock.lockInterruptibly();
        try {
            if (free > 0 && waiting.isEmpty()) {
                take(tenant);
                return tenant;
            }
            Waiter w = new Waiter(tenant, arrivals++, lock.newCondition());
            waiting.add(w);
            try {
                while (!w.given) {
                    w.granted.await();
                }
            } catch (InterruptedException e) {
                if (w.given) {
                    giveBack(tenant); // granted as it was interrupted: pass the permit on
                } else {
                    waiting.remove(w);
                }
                throw e;
            }
            return tenant;
        } finally {
            lock.unlock();
        }
    }

    /** Gives back a permit taken by {@link #acquire()} for {@code tenant}. */
    public void release(String tenant) {
        lock.lock();
        try {
            giveBack(tenant);
        } finally {
            lock.unlock();
        }
    }

    /** Permits held by {@code tenant} now. */
    public int held(String tenant) {
        lock.lock();
        try {
            return held.getOrDefault(tenant, 0);
        } finally {
            lock.unlock();
        }
    }

    /** Calls waiting for a permit now. */
    public int waiting() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    private void take(String tenant) {
        free--;
        held.merge(tenant, 1, Integer::sum);
        served.put(tenant, ++grants);
    }

    /** Whether {@code a} goes before {@code b}: fewer permits held, then served longer ago, then waiting longer. */
    private boolean before(Waiter a, Waiter b) {
        int c = Integer.compare(held.getOrDefault(a.tenant, 0), held.getOrDefault(b.tenant, 0));
        if (c == 0) {
            c = Long.compare(served.getOrDefault(a.tenant, 0L), served.getOrDefault(b.tenant, 0L));
        }
        return c < 0 || (c == 0 && a.arrival < b.arrival);
    }

    private void giveBack(String tenant) {
        Integer h = held.get(tenant);
        if (h == null) {
            throw new IllegalStateException("tenant '" + tenant + "' holds no permit");
        }
        if (h == 1) {
            held.remove(tenant);
            if (waiting.stream().noneMatch(w -> w.tenant.equals(tenant))) {
                served.remove(tenant); // forgotten once it neither holds nor waits: the map is as large as the callers
            }
        } else {
            held.put(tenant, h - 1);
        }
        free++;
        while (free > 0 && !waiting.isEmpty()) {
            Waiter next = waiting.get(0);
            for (Waiter w : waiting) {
                if (before(w, next)) {
                    next = w;
                }
            }
            waiting.remove(next);
            take(next.tenant);
            next.given = true;
            next.granted.signal();
        }
    }
}
