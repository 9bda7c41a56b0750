package dev.engram.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class MachineShareTest {

    private static final String SELF = "4242 (java (bench) x) S 1 4242 4242 0 -1 4194560 9 0 0 0 700 300 0 0 20 0 40 0";

    @Test
    void readsTheMachinesBusyTimeAndTheProcesssOwn() {
        MachineShare.Sample s = MachineShare.sample(
                List.of(
                        "cpu  1000 10 500 8000 200 5 5 0 0 0",
                        "cpu0 500 5 250 4000 100 3 2 0 0 0",
                        "cpu1 500 5 250 4000 100 2 3 0 0 0",
                        "intr 12345",
                        "ctxt 999"),
                SELF);
        // total: user..steal; busy: the total less idle and iowait
        assertThat(s.total()).isEqualTo(1000 + 10 + 500 + 8000 + 200 + 5 + 5);
        assertThat(s.busy()).isEqualTo(1000 + 10 + 500 + 5 + 5);
        // utime 700 and stime 300, counted after the name, which holds spaces and parentheses
        assertThat(s.own()).isEqualTo(1000);
        assertThat(s.cpus()).isEqualTo(2);
    }

    @Test
    void othersCoresAreTheMachinesBusyTimeLessTheProcesss() {
        MachineShare.Sample before = new MachineShare.Sample(1_000, 10_000, 400, 2);
        // 1,000 ticks a CPU passed; the machine was busy 1,500 of its 2,000, this process 1,000 of them
        MachineShare.Sample after = new MachineShare.Sample(2_500, 12_000, 1_400, 2);
        assertThat(MachineShare.othersCores(before, after)).isCloseTo(0.5, within(1e-9));
        // alone: the process's time is all the machine's busy time
        MachineShare.Sample alone = new MachineShare.Sample(2_000, 12_000, 1_400, 2);
        assertThat(MachineShare.othersCores(before, alone)).isZero();
        // counted apart (ticks of the machine and of the process are sampled a moment apart): never below zero
        MachineShare.Sample skewed = new MachineShare.Sample(1_900, 12_000, 1_400, 2);
        assertThat(MachineShare.othersCores(before, skewed)).isZero();
        assertThat(MachineShare.othersCores(before, before)).isZero();
    }

    @Test
    void aStatWithoutCpuLinesIsRefusedAndTheLiveSampleIsSane() {
        assertThatThrownBy(() -> MachineShare.sample(List.of("intr 1"), SELF))
                .isInstanceOf(IllegalArgumentException.class);
        MachineShare.sample().ifPresent(s -> {
            assertThat(s.cpus()).isPositive();
            assertThat(s.busy()).isBetween(0L, s.total());
            assertThat(s.own()).isPositive();
        });
    }
}
