package io.eventreplay.spark;

import java.util.ArrayList;
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
 * below the range's first tick onto it and sums the partitions. Rows of a split arrive mostly in order, so each
 * split's current tick is kept apart from the map, which a row then touches only when its split changes tick.
 *
 * <p>A partition may hold days of a split's ticks (files of many days packed together): the caller emits the map
 * whenever it is {@link #full()}, so a task holds at most {@link #FLUSH_ENTRIES} entries (about 120 bytes each)
 * and no record's arrays are longer. A (split, tick) may then appear in two records of one partition, as it does in
 * two partitions: the driver combines them.
 */
final class TickTimes {
    static final int FLUSH_ENTRIES = 1 << 20;
    private final long interval;
    private final int flushAt;
    private final Map<Key, long[]> byTick = new HashMap<>();
    private final Map<UTF8String, Key> current = new HashMap<>();
    private final Map<UTF8String, long[]> currentTimes = new HashMap<>();

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

    /** Whether the map holds its bound of entries: the caller then emits them. */
    boolean full() {
        return byTick.size() >= flushAt;
    }

    /** The split's bytes are copied when kept: they may point into a row buffer the scan reuses. */
    void add(UTF8String split, long arrival, long eventTime) {
        long tick = arrival + Math.floorMod(-arrival, interval);
        Key key = current.get(split);
        long[] times;
        if (key != null && key.tick() == tick) {
            times = currentTimes.get(split);
        } else {
            split = key != null ? key.split() : split.copy();
            key = new Key(split, tick);
            times = byTick.computeIfAbsent(key, k -> new long[] {0, Long.MIN_VALUE, Long.MAX_VALUE});
            current.put(split, key);
            currentTimes.put(split, times);
        }
        times[0]++;
        times[1] = Math.max(times[1], eventTime);
        times[2] = Math.min(times[2], eventTime);
    }

    /**
     * Records in OffsetRuns.SCHEMA, one per split: c 0, the split, its row count, and its ticks with their min and
     * max event times as three arrays of one length (in no particular order: the driver sorts). The map is then
     * empty.
     */
    void emit(List<InternalRow> out) {
        Map<UTF8String, List<Map.Entry<Key, long[]>>> bySplit = new TreeMap<>();
        for (Map.Entry<Key, long[]> e : byTick.entrySet()) {
            bySplit.computeIfAbsent(e.getKey().split(), s -> new ArrayList<>()).add(e);
        }
        for (Map.Entry<UTF8String, List<Map.Entry<Key, long[]>>> s : bySplit.entrySet()) {
            List<Map.Entry<Key, long[]>> entries = s.getValue();
            long[] ticks = new long[entries.size()];
            long[] minTimes = new long[entries.size()];
            long[] maxTimes = new long[entries.size()];
            long n = 0;
            for (int i = 0; i < ticks.length; i++) {
                long[] t = entries.get(i).getValue();
                ticks[i] = entries.get(i).getKey().tick();
                n += t[0];
                maxTimes[i] = t[1];
                minTimes[i] = t[2];
            }
            out.add(OffsetRuns.tickRecord(s.getKey(), n, ticks, minTimes, maxTimes));
        }
        byTick.clear();
        current.clear();
        currentTimes.clear();
    }

    private record Key(UTF8String split, long tick) {
    }
}
