package io.eventreplay.spark;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Tumbling and sliding windows' firings in one pass, with their running aggregates (engine/windows/fixed.py calls
 * it when the aggregates do not combine, e.g. a floating-point sum, which must add in replay order).
 *
 * <p>The input is the windows' elements (key, {@code __ws}, {@code __we}, arrival_time, {@code wm_before} and the
 * aggregates' columns), hash-partitioned by key and sorted within partitions by (window start, key, window end,
 * replay order): a window's elements are consecutive, in replay order, whatever the order of windows. An
 * element is early when its stream watermark is below the window's max timestamp ({@code wm_before < __we - 1});
 * the watermark never goes back in replay order, so a window's early elements come first. The window's timer
 * firing (the pending reason: its watermark is looked up later) holds its early elements and is emitted at the last
 * of them; each later element fires at once (the late-row reason, at its watermark) with every element so far.
 *
 * <p>The aggregates are Spark SQL's, evaluated as Spark evaluates a running window aggregate: count(*), count(c),
 * sum(c) (null until a value; a long sum of int/long, overflow an error under ANSI), min(c) and max(c) (nulls
 * skipped; doubles ordered as Spark orders them: NaN above everything, -0.0 equal to 0.0, the first of equals
 * kept), over int, long and double columns. The output keeps the input's partitioning by key (Spark then drops
 * the windows write's repartition into those partitions) and is sorted by (window start, key, window end, fire
 * index), which it declares: a fire index is unique within its window, so that is the windows output's order and
 * the write needs no sort of its own.
 */
public final class FixedWalk {
    static final int COUNT_ALL = 0;
    static final int COUNT = 1;
    static final int SUM = 2;
    static final int MIN = 3;
    static final int MAX = 4;

    private FixedWalk() {
    }

    /**
     * The firings of {@code sorted} (see the class doc): per aggregate its output name, function (count, sum, min,
     * max) and column ({@code *} for count(*)); {@code ansi}: a long sum's overflow is an error (else it wraps).
     */
    public static Dataset<Row> walk(Dataset<Row> sorted, List<String> names, List<String> functions,
                                    List<String> columns, boolean ansi, String pendingReason, String lateRowReason) {
        if (names.size() != functions.size() || names.size() != columns.size()) {
            throw new IllegalArgumentException("one function and one column per aggregate name");
        }
        StructType in = sorted.schema();
        Inputs inputs = new Inputs(in.fieldIndex("key"), in.apply("key").dataType(), in.fieldIndex("__ws"),
                in.fieldIndex("__we"), in.fieldIndex("arrival_time"), in.fieldIndex("wm_before"));
        StructType out = new StructType()
                .add(in.apply("key"))
                .add(in.apply("__ws"))
                .add(in.apply("__we"))
                .add("__pos", DataTypes.LongType, false)
                .add("fire_index", DataTypes.IntegerType, true)
                .add("fire_reason", DataTypes.StringType, true)
                .add("fire_watermark", DataTypes.LongType, true)
                .add(in.apply("arrival_time"));
        Running.Aggregate[] aggs = new Running.Aggregate[names.size()];
        for (int i = 0; i < aggs.length; i++) {
            aggs[i] = Running.Aggregate.of(functions.get(i), columns.get(i), in);
            out = out.add(names.get(i), aggs[i].resultType(), aggs[i].kind() > COUNT);
        }
        org.apache.spark.sql.classic.Dataset<Row> ds = (org.apache.spark.sql.classic.Dataset<Row>) sorted;
        SparkSession spark = (SparkSession) sorted.sparkSession();
        RDD<InternalRow> fired = ds.queryExecution().toRdd().toJavaRDD()
                .mapPartitions(new Pass(inputs, aggs, ansi, UTF8String.fromString(pendingReason),
                        UTF8String.fromString(lateRowReason))).rdd();
        List<AttributeReference> attrs = CollectionConverters.asJava(DataTypeUtils.toAttributes(out));
        LogicalRDD plan = new LogicalRDD(toSeq(new ArrayList<Attribute>(attrs)), fired,
                keyPartitioning(ds, attrs.get(0), fired.getNumPartitions()), toSeq(List.of(ascending(attrs.get(1)),
                ascending(attrs.get(0)), ascending(attrs.get(2)), ascending(attrs.get(4)))), false, Option.empty(),
                spark, Option.empty(), Option.empty());
        return org.apache.spark.sql.classic.Dataset$.MODULE$.ofRows(spark, plan);
    }

    /** The input's partitioning by key, restated on the output's key (rows stay where they are), if it has one
     * and its RDD has those partitions (adaptive execution, if a deployment turns it on, may have merged some). */
    private static Partitioning keyPartitioning(org.apache.spark.sql.classic.Dataset<Row> sorted,
                                                AttributeReference key, int partitions) {
        Partitioning p = sorted.queryExecution().executedPlan().outputPartitioning();
        if (p instanceof HashPartitioning h && h.numPartitions() == partitions && h.expressions().size() == 1
                && h.expressions().head() instanceof AttributeReference a && a.name().equals("key")) {
            return new HashPartitioning(toSeq(List.<Expression>of(key)), h.numPartitions());
        }
        return new UnknownPartitioning(partitions);
    }

    private static SortOrder ascending(Expression e) {
        return new SortOrder(e, Ascending$.MODULE$, NullsFirst$.MODULE$, toSeq(List.<Expression>of()));
    }

    private static <T> scala.collection.immutable.Seq<T> toSeq(List<T> list) {
        return CollectionConverters.asScala(list).toList();
    }

    /** Positions of the columns the walk reads. */
    record Inputs(int key, DataType keyType, int start, int end, int arrival, int watermark)
            implements java.io.Serializable {
    }

    private record Pass(Inputs in, Running.Aggregate[] aggs, boolean ansi, UTF8String pendingReason,
                        UTF8String lateRowReason) implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
        @Override
        public Iterator<InternalRow> call(Iterator<InternalRow> rows) {
            return new Firings(rows, this);
        }
    }

    /** A partition's firings, produced as its sorted elements are read (one window's state at a time). */
    private static final class Firings implements Iterator<InternalRow> {
        private final Iterator<InternalRow> rows;
        private final Pass pass;
        private final Running running;
        private final ArrayDeque<InternalRow> ready = new ArrayDeque<>();
        private Object key;  // the current window: a copy of its key, its bounds
        private long start;
        private long end;
        private boolean open;
        private long pos;  // elements so far
        private long early;  // of which early
        private long lastEarlyArrival;
        private boolean timerDone;  // the timer firing was emitted (or the window has had a late element)

        Firings(Iterator<InternalRow> rows, Pass pass) {
            this.rows = rows;
            this.pass = pass;
            this.running = new Running(pass.aggs(), pass.ansi());
        }

        @Override
        public boolean hasNext() {
            while (ready.isEmpty() && rows.hasNext()) {
                add(rows.next());
            }
            if (ready.isEmpty() && open) {
                timerFiring();
                open = false;
            }
            return !ready.isEmpty();
        }

        @Override
        public InternalRow next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return ready.poll();
        }

        private void add(InternalRow r) {
            Inputs in = pass.in();
            long ws = r.getLong(in.start());
            long we = r.getLong(in.end());
            if (!open || ws != start || we != end || !sameKey(r)) {
                if (open) {
                    timerFiring();
                }
                Object k = r.isNullAt(in.key()) ? null : r.get(in.key(), in.keyType());
                key = k instanceof UTF8String s ? s.copy() : k;  // the scan reuses the row's buffer
                start = ws;
                end = we;
                open = true;
                pos = 0;
                early = 0;
                timerDone = false;
                running.reset();
            }
            long wm = r.getLong(in.watermark());
            long arrival = r.getLong(in.arrival());
            if (wm < we - 1) {
                if (pos > early) {
                    throw new IllegalStateException("an early element after a late one in window [" + ws + ", "
                            + we + "): the elements are not in replay order");
                }
                running.add(r);
                pos++;
                early++;
                lastEarlyArrival = arrival;
                return;
            }
            timerFiring();  // the early elements' firing comes before this element is added
            running.add(r);
            pos++;
            long index = pos - early - 1 + (early > 0 ? 1 : 0);
            ready.add(firing(pos, index, pass.lateRowReason(), wm, arrival));
        }

        private boolean sameKey(InternalRow r) {
            Inputs in = pass.in();
            if (r.isNullAt(in.key())) {
                return key == null;
            }
            return key != null && key.equals(r.get(in.key(), in.keyType()));
        }

        /** The window's timer firing over its early elements, once, if it has any. */
        private void timerFiring() {
            if (!timerDone && early > 0) {
                ready.add(firing(early, 0, pass.pendingReason(), null, lastEarlyArrival));
            }
            timerDone = true;
        }

        private InternalRow firing(long position, long index, UTF8String reason, Long watermark, long arrival) {
            Object[] values = new Object[8 + pass.aggs().length];
            values[0] = key;
            values[1] = start;
            values[2] = end;
            values[3] = position;
            values[4] = Math.toIntExact(index);  // an int, as the windows output has it: no cast between
            // the walk and the windows write, which then keeps the walk's order instead of sorting again
            values[5] = reason;
            values[6] = watermark;
            values[7] = arrival;
            running.values(values, 8);
            return new GenericInternalRow(values);
        }
    }
}
