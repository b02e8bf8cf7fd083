package io.eventreplay.spark;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Per (split, tick) of one partition's candidate rows: the count and the largest and smallest event time, the
 * periodic timeline's aggregate (engine/timeline/driver.py), taken in the read-order pass so that it needs no scan
 * of its own. A row's tick is the first multiple of the interval at or after its arrival; the driver clamps ticks
 * below the range's first tick onto it and sums the partitions.
 *
 * <p>A split's rows arrive in order within a file, so its ticks are kept as sorted arrays that a row extends at
 * the end (no hashing, no object per tick); a row whose tick is below the split's last finds it by binary search,
 * or, when the tick is new there, goes to the strays, which the emit sorts and merges in.
 *
 * <p>A partition may hold days of a split's ticks (files of many days packed together): the caller emits them
 * whenever they are {@link #full()}, so a task holds at most {@link #FLUSH_ENTRIES} entries (three longs each,
 * at most twice that with the arrays' room to grow) and no record's arrays are longer. A (split, tick) may then appear in two records of one partition, as it does in
 * two partitions: the driver combines them.
 */
final class TickTimes {
    static final int FLUSH_ENTRIES = 1 << 20;
    private final long interval;
    private final int flushAt;
    private final Map<UTF8String, SplitTicks> bySplit = new HashMap<>();
    private int entries;

    TickTimes(long interval) {
        this(interval, FLUSH_ENTRIES);
    }

    TickTimes(long interval, int flushAt) {
        if (interval <= 0 || flushAt <= 0) {
            throw new IllegalArgumentException("interval and flushAt must be positive");
        }
        this.interval = interval;
        this.flushAt = flushAt;
    }

    /** Whether the entries held reach their bound: the caller then emits them. */
    boolean full() {
        return entries >= flushAt;
    }

    /** The (split, tick) entries held. */
    int entries() {
        return entries;
    }

    /** The split's bytes are copied when kept: they may point into a row buffer the scan reuses. */
    void add(UTF8String split, long arrival, long eventTime) {
        long tick = arrival + Math.floorMod(-arrival, interval);
        SplitTicks s = bySplit.get(split);
        if (s == null) {
            split = split.copy();
            s = new SplitTicks();
            bySplit.put(split, s);
        }
        if (s.add(tick, eventTime)) {
            entries++;
        }
    }

    /**
     * Records in OffsetRuns.SCHEMA, one per split (in split order): c 0, the split, its row count, and its ticks
     * (ascending) with their min and max event times as three arrays of one length. Then nothing is held.
     */
    void emit(List<InternalRow> out) {
        for (Map.Entry<UTF8String, SplitTicks> e : new TreeMap<>(bySplit).entrySet()) {
            out.add(e.getValue().record(e.getKey()));
        }
        bySplit.clear();
        entries = 0;
    }

    /**
     * One split's ticks: sorted distinct entries extended at the end, and the strays whose tick came below the last
     * one's and is not among them (a partition packs files in no time order: each file's rows are a run of strays
     * in tick order, so a stray mostly extends the last stray). The emit sorts and merges the strays in.
     */
    private static final class SplitTicks {
        private final Entries sorted = new Entries();
        private final Entries strays = new Entries();
        private long rows;

        /** Whether the tick took a new entry. */
        boolean add(long tick, long eventTime) {
            rows++;
            if (sorted.size == 0 || sorted.lastTick() < tick) {
                sorted.append(tick, eventTime, eventTime);
                return true;
            }
            int at = sorted.lastTick() == tick ? sorted.size - 1
                    : Arrays.binarySearch(sorted.ticks, 0, sorted.size, tick);
            if (at >= 0) {
                sorted.widen(at, eventTime, eventTime);
                return false;
            }
            if (strays.size > 0 && strays.lastTick() == tick) {
                strays.widen(strays.size - 1, eventTime, eventTime);
                return false;
            }
            strays.append(tick, eventTime, eventTime);
            return true;
        }

        InternalRow record(UTF8String split) {
            Entries all = strays.size == 0 ? sorted : merged();
            return OffsetRuns.tickRecord(split, rows, Arrays.copyOf(all.ticks, all.size),
                    Arrays.copyOf(all.minTimes, all.size), Arrays.copyOf(all.maxTimes, all.size));
        }

        /** Every entry, sorted and strays, one per distinct tick in tick order. */
        private Entries merged() {
            long[] ticks = Arrays.copyOf(sorted.ticks, sorted.size + strays.size);
            System.arraycopy(strays.ticks, 0, ticks, sorted.size, strays.size);
            Arrays.sort(ticks);
            Entries out = new Entries();
            for (long t : ticks) {
                if (out.size == 0 || out.lastTick() != t) {
                    out.append(t, Long.MAX_VALUE, Long.MIN_VALUE);
                }
            }
            for (Entries from : List.of(sorted, strays)) {
                for (int i = 0; i < from.size; i++) {
                    out.widen(Arrays.binarySearch(out.ticks, 0, out.size, from.ticks[i]), from.minTimes[i],
                            from.maxTimes[i]);
                }
            }
            return out;
        }
    }

    /** (tick, min event time, max event time) entries in three growing arrays. */
    private static final class Entries {
        long[] ticks = new long[64];
        long[] minTimes = new long[64];
        long[] maxTimes = new long[64];
        int size;

        long lastTick() {
            return ticks[size - 1];
        }

        void append(long tick, long minTime, long maxTime) {
            if (size == ticks.length) {
                int grown = size * 2;
                ticks = Arrays.copyOf(ticks, grown);
                minTimes = Arrays.copyOf(minTimes, grown);
                maxTimes = Arrays.copyOf(maxTimes, grown);
            }
            ticks[size] = tick;
            minTimes[size] = minTime;
            maxTimes[size] = maxTime;
            size++;
        }

        void widen(int at, long minTime, long maxTime) {
            minTimes[at] = Math.min(minTimes[at], minTime);
            maxTimes[at] = Math.max(maxTimes[at], maxTime);
        }
    }
}
