package io.eventreplay.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The offset pre-check's first pass: each Spark partition's rows in the order they were read, cut into runs.
 *
 * <p>Input columns, by position: status code (int: 0 a candidate row, else a row the check only counts), split
 * (string), folder (long), offset (long), arrival time (long), file (long: a hash of the file's name). A run is a
 * sequence of one split's candidate rows of one folder and file, in read order, whose arrival times never fall and
 * whose offsets strictly rise. A log written in arrival order per split (a Kafka dump, this project's own outputs)
 * has one run per split and file, so the driver can prove a split clean from a handful of runs instead of sorting
 * its rows: when the runs, ordered by their first row, follow one another in both arrival and offset, the split's
 * rows in (arrival, offset) order are the runs one after the other, and every offset rises. Runs stop at a file's
 * end because a partition reads its files in no particular order: a run across two files would span the time of
 * the files read elsewhere and fail to chain (the row-by-row test is what proves a run, so two files with one hash
 * cost chaining, never exactness). Past {@code maxRuns} runs of one split in a partition, the rest of that split's
 * rows in the partition are summed into one record marked unordered (the driver then checks the split by
 * sorting). The other statuses get one summary record per (status, folder). Nothing here decides a row: the
 * records only say which splits need the sorted check.
 *
 * <p>With an interval above 0 (periodic watermarks), the pass also takes the timeline's per-(split, tick) event
 * times of the candidate rows (TickTimes; input column 6: event time), as one record per split holding arrays
 * (tick, min and max event time).
 *
 * <p>The pass reads Spark's internal rows (the query's own UnsafeRows) and writes internal rows: the external Row
 * API would decode every row's split into a Java String and box every value, which cost most of the pass.
 */
public final class OffsetRuns {
    private static final DataType TICK_ARRAY = DataTypes.createArrayType(DataTypes.LongType, false);
    public static final StructType SCHEMA = new StructType()
            .add("c", DataTypes.IntegerType, false)
            .add("s", DataTypes.StringType, true)
            .add("f", DataTypes.LongType, false)
            .add("n", DataTypes.LongType, false)
            .add("lo", DataTypes.LongType, true)
            .add("hi", DataTypes.LongType, true)
            .add("min_o", DataTypes.LongType, true)
            .add("max_o", DataTypes.LongType, true)
            .add("ordered", DataTypes.BooleanType, false)
            // Set on tick records only (one per split of a partition, see TickTimes): arrays, not a record per
            // tick, because a record here carries every column above and ticks outnumber runs by far.
            .add("ticks", TICK_ARRAY, true)
            .add("min_e", TICK_ARRAY, true)
            .add("max_e", TICK_ARRAY, true);

    private static final long NONE = Long.MIN_VALUE;  // a missing offset or arrival time (never a candidate's)

    private OffsetRuns() {
    }

    /**
     * One record per run (or per unordered rest, or per other status) of each partition of {@code narrow}; with
     * {@code interval} above 0, also one per (split, tick) of its candidate rows.
     */
    public static Dataset<Row> runs(Dataset<Row> narrow, int maxRuns, long interval) {
        if (maxRuns < 1) {
            throw new IllegalArgumentException("maxRuns must be at least 1, got " + maxRuns);
        }
        if (interval < 0) {
            throw new IllegalArgumentException("interval must be 0 (none) or positive, got " + interval);
        }
        org.apache.spark.sql.classic.Dataset<Row> rows = (org.apache.spark.sql.classic.Dataset<Row>) narrow;
        SparkSession spark = (SparkSession) narrow.sparkSession();
        return spark.internalCreateDataFrame(
                rows.queryExecution().toRdd().toJavaRDD().mapPartitions(new Pass(maxRuns, interval)).rdd(), SCHEMA,
                false);
    }

    static InternalRow tickRecord(UTF8String split, long n, long[] ticks, long[] minEventTimes,
                                  long[] maxEventTimes) {
        return new GenericInternalRow(new Object[] {0, split, 0L, n, null, null, null, null, false,
            UnsafeArrayData.fromPrimitiveArray(ticks), UnsafeArrayData.fromPrimitiveArray(minEventTimes),
            UnsafeArrayData.fromPrimitiveArray(maxEventTimes)});
    }

    private record Pass(int maxRuns, long interval) implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
        @Override
        public Iterator<InternalRow> call(Iterator<InternalRow> rows) {
            List<InternalRow> out = new ArrayList<>();
            Map<Key, Run> open = new LinkedHashMap<>();
            Map<Key, Integer> closed = new HashMap<>();
            TickTimes ticks = interval > 0 ? new TickTimes(interval) : null;
            while (rows.hasNext()) {
                InternalRow r = rows.next();
                // The split points into the row's buffer, which the scan reuses: a key is copied when stored.
                Key key = new Key(r.getInt(0), r.isNullAt(1) ? null : r.getUTF8String(1), r.getLong(2));
                // Only candidates are sure to have both (the others may lack them: that is why they are not).
                long offset = r.isNullAt(3) ? NONE : r.getLong(3);
                long arrival = r.isNullAt(4) ? NONE : r.getLong(4);
                long file = r.getLong(5);
                if (ticks != null && key.code() == 0) {
                    ticks.add(key.split(), arrival, r.getLong(6));
                    if (ticks.full()) {
                        ticks.emit(out);
                    }
                }
                Run run = open.get(key);
                if (run == null) {
                    key = key.copy();
                    open.put(key, new Run(key.code() == 0, offset, arrival, file));
                } else if (!run.ordered || run.follows(offset, arrival, file)) {
                    run.add(offset, arrival);
                } else {
                    key = key.copy();
                    int done = closed.merge(key, 1, Integer::sum);
                    if (done <= maxRuns) {
                        out.add(run.record(key));
                        open.put(key, new Run(true, offset, arrival, file));
                    } else {  // too many runs: the rest of this split's rows here only count
                        run.ordered = false;
                        run.add(offset, arrival);
                    }
                }
            }
            for (Map.Entry<Key, Run> e : open.entrySet()) {
                out.add(e.getValue().record(e.getKey()));
            }
            if (ticks != null) {
                ticks.emit(out);
            }
            return out.iterator();
        }
    }

    private record Key(int code, UTF8String split, long folder) {
        Key {
            split = code == 0 ? split : null;  // the other statuses are counted whatever their split holds
        }

        Key copy() {
            return split == null ? this : new Key(code, split.copy(), folder);
        }
    }

    /** A run in progress: its rows' count and ranges (NONE values left out); `ordered` false once it is a sum. */
    private static final class Run {
        boolean ordered;
        long n;
        long lo = Long.MAX_VALUE;
        long hi = NONE;
        long minOffset = Long.MAX_VALUE;
        long maxOffset = NONE;
        long lastOffset;
        long lastArrival;
        final long file;

        Run(boolean ordered, long offset, long arrival, long file) {
            this.ordered = ordered;
            this.file = file;
            add(offset, arrival);
        }

        boolean follows(long offset, long arrival, long file) {
            return arrival >= lastArrival && offset > lastOffset && file == this.file;
        }

        void add(long offset, long arrival) {
            n++;
            if (arrival != NONE) {
                lo = Math.min(lo, arrival);
                hi = Math.max(hi, arrival);
            }
            if (offset != NONE) {
                minOffset = Math.min(minOffset, offset);
                maxOffset = Math.max(maxOffset, offset);
            }
            lastOffset = offset;
            lastArrival = arrival;
        }

        InternalRow record(Key key) {
            return new GenericInternalRow(new Object[] {key.code(), key.split(), key.folder(), n, orNull(lo, hi),
                orNull(hi, hi), orNull(minOffset, maxOffset), orNull(maxOffset, maxOffset), ordered, null, null,
                null});
        }

        private static Long orNull(long value, long max) {
            return max == NONE ? null : value;  // max is NONE only when no row had the value
        }
    }
}
