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
 * <p>A split's rows arrive mostly in order, so its ticks are kept as sorted arrays that a row extends at the end
 * (no hashing, no object per tick); a row whose tick is below the split's last finds it by binary search, or, when
 * the tick is new there, goes to a small map of strays that the emit merges back in.
 *
 * <p>A partition may hold days of a split's ticks (files of many days packed together): the caller emits them
 * whenever they are {@link #full()}, so a task holds at most {@link #FLUSH_ENTRIES} entries (about 40 bytes each)
 * and no record's arrays are longer. A (split, tick) may then appear in two records of one partition, as it does in
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

    /** One split's ticks: sorted arrays extended at the end, plus the strays that came below their last tick. */
    private static final class SplitTicks {
        private long[] ticks = new long[64];
        private long[] minTimes = new long[64];
        private long[] maxTimes = new long[64];
        private int size;
        private long rows;
        private final TreeMap<Long, long[]> strays = new TreeMap<>();  // tick -> {min, max}

        /** Whether the tick is a new entry. */
        boolean add(long tick, long eventTime) {
            rows++;
            int at = size > 0 && ticks[size - 1] == tick ? size - 1
                    : size == 0 || ticks[size - 1] < tick ? -1 : Arrays.binarySearch(ticks, 0, size, tick);
            if (at >= 0) {
                minTimes[at] = Math.min(minTimes[at], eventTime);
                maxTimes[at] = Math.max(maxTimes[at], eventTime);
                return false;
            }
            if (size == 0 || ticks[size - 1] < tick) {
                append(tick, eventTime, eventTime);
                return true;
            }
            long[] seen = strays.get(tick);
            if (seen != null) {
                seen[0] = Math.min(seen[0], eventTime);
                seen[1] = Math.max(seen[1], eventTime);
                return false;
            }
            strays.put(tick, new long[] {eventTime, eventTime});
            return true;
        }

        private void append(long tick, long minTime, long maxTime) {
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

        InternalRow record(UTF8String split) {
            if (!strays.isEmpty()) {
                mergeStrays();
            }
            return OffsetRuns.tickRecord(split, rows, Arrays.copyOf(ticks, size), Arrays.copyOf(minTimes, size),
                    Arrays.copyOf(maxTimes, size));
        }

        /** The strays merged into the sorted arrays (no tick is in both). */
        private void mergeStrays() {
            long[] t = ticks;
            long[] lo = minTimes;
            long[] hi = maxTimes;
            int n = size;
            ticks = new long[n + strays.size()];
            minTimes = new long[ticks.length];
            maxTimes = new long[ticks.length];
            size = 0;
            int i = 0;
            for (Map.Entry<Long, long[]> stray : strays.entrySet()) {
                for (; i < n && t[i] < stray.getKey(); i++) {
                    append(t[i], lo[i], hi[i]);
                }
                append(stray.getKey(), stray.getValue()[0], stray.getValue()[1]);
            }
            for (; i < n; i++) {
                append(t[i], lo[i], hi[i]);
            }
            strays.clear();
        }
    }
}
