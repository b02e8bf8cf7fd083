package io.eventreplay.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * A sorted table of the driver looked up by a column, without a join (engine/lookups.py): the table is a Spark
 * broadcast variable (shipped to each executor once, with no job of its own, where a broadcast join of the same
 * table costs a job to collect and build it) and each row binary-searches it.
 *
 * <p>Two kinds. FLOOR: the value at the largest key {@code <= x}, else a default (a null x too): never null.
 * CEILING: the smallest key {@code >= x}, null when there is none or x is null. Keys come from Python as
 * little-endian int64 bytes (numpy's {@code tobytes()}: py4j passes a byte array in one piece, a list element by
 * element) and must be ascending; equal keys are allowed (FLOOR takes the last of them, as numpy's
 * {@code searchsorted(side="right") - 1}). The function is deterministic and allocates nothing per row beyond the
 * boxing of its result.
 */
public final class SortedLookup implements UDF1<Long, Long> {
    private static final long serialVersionUID = 1L;

    private final Broadcast<long[][]> table;  // {keys} or {keys, values}
    private final boolean floor;
    private final long fallback;
    // The broadcast's value, read once per deserialised copy (one per task) instead of once per row.
    private transient long[] keys;
    private transient long[] values;
    // The last answer: rows come mostly in arrival order, so most rows look up the tick the row before did. One
    // immutable pair, read and replaced whole: a copy evaluated by two threads (the driver's optimizer) stays right.
    private transient Answer last;

    private SortedLookup(Broadcast<long[][]> table, boolean floor, long fallback) {
        this.table = table;
        this.floor = floor;
        this.fallback = fallback;
    }

    /** The value at the largest of {@code keys} at or below {@code x}, else {@code fallback}: a non-null column. */
    public static Column floor(SparkSession spark, byte[] keys, byte[] values, long fallback, Column x) {
        long[] k = longs(keys);
        long[] v = longs(values);
        if (k.length != v.length) {
            throw new IllegalArgumentException(k.length + " keys but " + v.length + " values");
        }
        UserDefinedFunction f = functions.udf(new SortedLookup(broadcast(spark, k, v), true, fallback),
                DataTypes.LongType);
        return f.asNonNullable().apply(x);
    }

    /** The smallest of {@code keys} at or above {@code x}, else null. */
    public static Column ceiling(SparkSession spark, byte[] keys, Column x) {
        long[] k = longs(keys);
        UserDefinedFunction f = functions.udf(new SortedLookup(broadcast(spark, k), false, 0L), DataTypes.LongType);
        return f.apply(x);
    }

    @Override
    public Long call(Long x) {
        if (keys == null) {
            long[][] t = table.value();
            keys = t[0];
            values = floor ? t[1] : null;
        }
        if (x == null) {
            return floor ? fallback : null;
        }
        Answer a = last;
        if (a == null || a.x() != x) {
            a = new Answer(x, search(x));
            last = a;
        }
        return a.value();
    }

    /** The answer for x (null: a ceiling found no key). */
    private record Answer(long x, Long value) {
    }

    private Long search(long x) {
        if (floor) {
            int at = lastAtOrBelow(keys, x);
            return at < 0 ? fallback : values[at];
        }
        int at = firstAtOrAbove(keys, x);
        return at < keys.length ? Long.valueOf(keys[at]) : null;
    }

    /** The index of the last key {@code <= x}, -1 if none. */
    static int lastAtOrBelow(long[] keys, long x) {
        int lo = 0;
        int hi = keys.length;  // the answer + 1 is in [lo, hi]
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (keys[mid] <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo - 1;
    }

    /** The index of the first key {@code >= x}, keys.length if none. */
    static int firstAtOrAbove(long[] keys, long x) {
        int lo = 0;
        int hi = keys.length;  // the answer is in [lo, hi]
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (keys[mid] < x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** {keys} or {keys, values} as one broadcast variable; the keys are checked ascending (the search needs it). */
    private static Broadcast<long[][]> broadcast(SparkSession spark, long[]... table) {
        long[] k = table[0];
        for (int i = 1; i < k.length; i++) {
            if (k[i] < k[i - 1]) {
                throw new IllegalArgumentException("keys must be ascending: " + k[i - 1] + " then " + k[i]);
            }
        }
        return JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(table);
    }

    private static long[] longs(byte[] bytes) {
        if (bytes.length % Long.BYTES != 0) {
            throw new IllegalArgumentException("int64 bytes expected, got " + bytes.length + " bytes");
        }
        long[] out = new long[bytes.length / Long.BYTES];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(out);
        return out;
    }

    @Override
    public String toString() {
        return "SortedLookup(" + (floor ? "floor" : "ceiling") + ")";
    }
}
