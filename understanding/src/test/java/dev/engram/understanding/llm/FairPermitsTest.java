package dev.engram.understanding.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FairPermitsTest {

    /** A thread that takes a permit as {@code tenant} and reports it in {@code granted}, holding it until released. */
    private static Thread caller(FairPermits permits, String tenant, BlockingQueue<String> granted) {
        return Thread.ofVirtual()
                .start(() -> FairPermits.as(tenant, () -> {
                    try {
                        String t = permits.acquire();
                        granted.add(t);
                    } catch (InterruptedException e) {
                        granted.add("interrupted:" + tenant);
                    }
                    return null;
                }));
    }

    private static void awaitWaiting(FairPermits permits, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (permits.waiting() < n && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(permits.waiting()).isEqualTo(n);
    }

    @Test
    void aTenantAloneUsesEveryPermit() throws InterruptedException {
        FairPermits permits = new FairPermits(3);
        BlockingQueue<String> granted = new LinkedBlockingQueue<>();
        for (int i = 0; i < 3; i++) {
            caller(permits, "a", granted).join();
        }
        assertThat(permits.held("a")).isEqualTo(3);
        assertThat(granted).containsExactly("a", "a", "a");
    }

    @Test
    void theNextPermitGoesToTheTenantHoldingFewestNotToTheLongestQueue() throws InterruptedException {
        FairPermits permits = new FairPermits(2);
        BlockingQueue<String> granted = new LinkedBlockingQueue<>();
        caller(permits, "flood", granted).join();
        caller(permits, "flood", granted).join();
        granted.clear();
        // the flooding tenant queues ten calls first, then a quiet tenant asks for one
        for (int i = 0; i < 10; i++) {
            caller(permits, "flood", granted);
        }
        awaitWaiting(permits, 10);
        caller(permits, "quiet", granted);
        awaitWaiting(permits, 11);

        permits.release("flood");
        assertThat(granted.poll(10, TimeUnit.SECONDS)).isEqualTo("quiet");
        // with one permit each, the flood's oldest waiter gets the next one
        permits.release("flood");
        assertThat(granted.poll(10, TimeUnit.SECONDS)).isEqualTo("flood");
        assertThat(permits.held("quiet")).isEqualTo(1);
        assertThat(permits.held("flood")).isEqualTo(1);
    }

    @Test
    void tenantsWaitingAtOnceAreServedInTurn() throws InterruptedException {
        FairPermits permits = new FairPermits(1);
        BlockingQueue<String> granted = new LinkedBlockingQueue<>();
        caller(permits, "x", granted).join();
        granted.clear();
        List<String> callers = List.of("a", "a", "a", "b", "b", "c");
        for (int i = 0; i < callers.size(); i++) {
            caller(permits, callers.get(i), granted);
            awaitWaiting(permits, i + 1);
        }
        List<String> order = new ArrayList<>();
        String holder = "x";
        for (int i = 0; i < 6; i++) {
            permits.release(holder);
            holder = granted.poll(10, TimeUnit.SECONDS);
            order.add(holder);
        }
        // one permit: no waiting tenant holds one, so the turns go round the tenants, each call in its tenant's order
        assertThat(order).containsExactly("a", "b", "c", "a", "b", "a");
    }

    @Test
    void anInterruptedWaiterLeavesTheQueueAndAGrantedPermitIsNotLost() throws InterruptedException {
        FairPermits permits = new FairPermits(1);
        BlockingQueue<String> granted = new LinkedBlockingQueue<>();
        caller(permits, "a", granted).join();
        granted.clear();
        Thread waiter = caller(permits, "b", granted);
        awaitWaiting(permits, 1);
        waiter.interrupt();
        assertThat(granted.poll(10, TimeUnit.SECONDS)).isEqualTo("interrupted:b");
        assertThat(permits.waiting()).isZero();
        permits.release("a");
        CountDownLatch took = new CountDownLatch(1);
        Thread.ofVirtual()
                .start(() -> FairPermits.as("c", () -> {
                    try {
                        permits.acquire();
                        took.countDown();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return null;
                }));
        assertThat(took.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void givingBackAPermitNotHeldIsABug() {
        FairPermits permits = new FairPermits(1);
        assertThatThrownBy(() -> permits.release("nobody")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theTenantIsTheCallingThreadsAndRestoredAfter() {
        assertThat(FairPermits.tenant()).isEqualTo(FairPermits.NO_TENANT);
        String inner = FairPermits.as("outer", () -> FairPermits.as("inner", FairPermits::tenant));
        assertThat(inner).isEqualTo("inner");
        assertThat(FairPermits.as("outer", FairPermits::tenant)).isEqualTo("outer");
        assertThat(FairPermits.tenant()).isEqualTo(FairPermits.NO_TENANT);
    }
}
