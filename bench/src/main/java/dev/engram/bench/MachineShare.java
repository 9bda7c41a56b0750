package dev.engram.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How much of the machine other processes took while a phase of a benchmark ran: the machine's busy CPU time (from
 * {@code /proc/stat}) less this process's own (from {@code /proc/self/stat}), in cores. Timings taken while another
 * process (a build, a test run) used the cores are no comparison with a run that had them alone; the benchmark says
 * so in its results rather than leaving it to whoever reads them. Linux only: elsewhere nothing is measured.
 */
final class MachineShare {

    /** Past this many cores of other processes' work on average, a phase did not have the machine alone. */
    static final double SHARED_CORES = 0.25;

    /** The machine's busy and total CPU time and this process's own, in clock ticks, and its number of CPUs. */
    record Sample(long busy, long total, long own, int cpus) {}

    private MachineShare() {}

    /** The CPU times now; empty where {@code /proc} cannot be read. */
    static Optional<Sample> sample() {
        try {
            List<String> stat = Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.US_ASCII);
            String self = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
            return Optional.of(sample(stat, self));
        } catch (IOException | RuntimeException notLinux) {
            return Optional.empty();
        }
    }

    /** The sample in the lines of {@code /proc/stat} and the line of {@code /proc/self/stat}. */
    static Sample sample(List<String> stat, String self) {
        long[] machine = null;
        int cpus = 0;
        for (String line : stat) {
            if (line.startsWith("cpu ")) {
                machine = busyAndTotal(line);
            } else if (line.startsWith("cpu")) {
                cpus++;
            }
        }
        if (machine == null || cpus == 0) {
            throw new IllegalArgumentException("no cpu lines in /proc/stat");
        }
        return new Sample(machine[0], machine[1], ownTicks(self), cpus);
    }

    /**
     * Busy and total ticks of the machine's {@code cpu} line: user, nice, system, idle, iowait, irq, softirq and steal
     * (guest time is counted in user already); idle and iowait are not busy.
     */
    static long[] busyAndTotal(String cpuLine) {
        String[] f = cpuLine.strip().split("\\s+");
        long total = 0;
        for (int i = 1; i <= 8 && i < f.length; i++) {
            total += Long.parseLong(f[i]);
        }
        long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
        return new long[] {total - idle, total};
    }

    /** User and system ticks of a process's {@code stat} line (fields 14 and 15, counted after its name). */
    static long ownTicks(String selfStat) {
        // the name (field 2) is in parentheses and may hold spaces and parentheses itself: fields follow the last ')'
        String[] f = selfStat.substring(selfStat.lastIndexOf(')') + 1).strip().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** Cores other processes kept busy on average between two samples (0 when no time passed). */
    static double othersCores(Sample before, Sample after) {
        double elapsedPerCpu = (double) (after.total() - before.total()) / after.cpus();
        if (elapsedPerCpu <= 0) {
            return 0;
        }
        long others = (after.busy() - before.busy()) - (after.own() - before.own());
        return Math.max(0, others) / elapsedPerCpu;
    }
}
