package dev.engram.service.http;

import java.util.HashMap;
import java.util.Map;

/**
 * The requests an instance serves at once, with a share per namespace: a namespace may hold at most
 * {@code perNamespace} of the {@code total} slots, so a tenant that floods an instance (with answers waiting on an
 * LLM, say) leaves slots for the others. Requests outside any namespace share one tenant of their own.
 */
public final class RequestSlots {

    /** What a refused request was refused for. */
    enum Refusal {
        NONE,
        INSTANCE,
        NAMESPACE
    }

    private final int total;
    private final int perNamespace;
    private final Map<String, Integer> held = new HashMap<>();
    private int used;

    RequestSlots(int total, int perNamespace) {
        if (total < 1 || perNamespace < 1) {
            throw new IllegalArgumentException("slots must be positive");
        }
        this.total = total;
        this.perNamespace = Math.min(perNamespace, total);
    }

    /** The default share of a namespace: half the slots (at least one). */
    public static int defaultShare(int total) {
        return Math.max(1, total / 2);
    }

    /** Takes a slot for {@code namespace} (null outside one), or says why none may be taken. */
    synchronized Refusal tryAcquire(String namespace) {
        String tenant = namespace == null ? "" : namespace;
        if (used >= total) {
            return Refusal.INSTANCE;
        }
        int mine = held.getOrDefault(tenant, 0);
        if (mine >= perNamespace) {
            return Refusal.NAMESPACE;
        }
        used++;
        held.put(tenant, mine + 1);
        return Refusal.NONE;
    }

    /** Takes a slot for {@code namespace}, or a 429 that says whose slots are all taken. */
    public void take(String namespace) {
        Refusal refusal = tryAcquire(namespace);
        if (refusal == Refusal.INSTANCE) {
            throw new ApiException(429, "too_many_requests", "this instance is serving as many requests as it may", 1);
        }
        if (refusal == Refusal.NAMESPACE) {
            throw new ApiException(
                    429,
                    "too_many_requests",
                    "this instance is serving as many requests of namespace '" + HttpApi.abbreviate(namespace)
                            + "' as one namespace may ("
                            + perNamespace + "); other namespaces keep theirs",
                    1);
        }
    }

    public synchronized void release(String namespace) {
        String tenant = namespace == null ? "" : namespace;
        Integer mine = held.get(tenant);
        if (mine == null) {
            throw new IllegalStateException("no slot is held for '" + tenant + "'");
        }
        if (mine == 1) {
            held.remove(tenant);
        } else {
            held.put(tenant, mine - 1);
        }
        used--;
    }
}
