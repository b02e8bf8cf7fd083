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
 */
final class TickTimes {
    private final long interval;
    private final Map<Key, long[]> byTick = new HashMap<>();
    private final Map<UTF8String, Key> current = new HashMap<>();
    private final Map<UTF8String, long[]> currentTimes = new HashMap<>();

    TickTimes(long interval) {
        this.interval = interval;
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
     * max event times as three arrays of one length (in no particular order: the driver sorts).
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
    }

    private record Key(UTF8String split, long tick) {
    }
}
