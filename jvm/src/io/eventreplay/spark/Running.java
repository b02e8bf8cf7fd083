package io.eventreplay.spark;

import java.io.Serializable;
import java.util.Locale;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** The aggregates over a window's elements so far, updated element by element in order, as Spark's running window
 * aggregates are (FixedWalk's class doc). */
final class Running {
    /** An aggregate of FixedWalk: its function (FixedWalk.COUNT_ALL .. MAX), input column and the column's type
     * (int, long or double). */
    record Aggregate(int kind, int column, DataType type) implements Serializable {
        static Aggregate of(String function, String column, StructType in) {
            String fn = function.toLowerCase(Locale.ROOT);
            if (column.equals("*")) {
                if (!fn.equals("count")) {
                    throw new IllegalArgumentException(fn + "(*) is not an aggregate");
                }
                return new Aggregate(FixedWalk.COUNT_ALL, -1, DataTypes.LongType);
            }
            DataType type = in.apply(column).dataType();
            int kind = switch (fn) {
                case "count" -> FixedWalk.COUNT;
                case "sum" -> FixedWalk.SUM;
                case "min" -> FixedWalk.MIN;
                case "max" -> FixedWalk.MAX;
                default -> throw new IllegalArgumentException(
                        "the walk evaluates count, sum, min and max, not " + fn);
            };
            if (kind != FixedWalk.COUNT && !type.equals(DataTypes.IntegerType) && !type.equals(DataTypes.LongType)
                    && !type.equals(DataTypes.DoubleType)) {
                throw new IllegalArgumentException(fn + "(" + column + ") of " + type.simpleString()
                        + ": the walk sums and orders int, long and double columns");
            }
            return new Aggregate(kind, in.fieldIndex(column), type);
        }

        /** Spark's result type: count a long; sum a long (int, long) or double; min and max the column's type. */
        DataType resultType() {
            if (kind <= FixedWalk.COUNT) {
                return DataTypes.LongType;
            }
            if (kind == FixedWalk.SUM) {
                return isDouble() ? DataTypes.DoubleType : DataTypes.LongType;
            }
            return type;
        }

        boolean isDouble() {
            return type.equals(DataTypes.DoubleType);
        }
    }

    private final Aggregate[] aggs;
    private final boolean ansi;
    private final boolean[] seen;  // a non-null value was added (count: always true)
    private final long[] longs;  // counts, integral sums and extremes
    private final double[] doubles;  // floating-point sums and extremes

    Running(Aggregate[] aggs, boolean ansi) {
        this.aggs = aggs;
        this.ansi = ansi;
        this.seen = new boolean[aggs.length];
        this.longs = new long[aggs.length];
        this.doubles = new double[aggs.length];
    }

    void reset() {
        for (int i = 0; i < aggs.length; i++) {
            seen[i] = aggs[i].kind() <= FixedWalk.COUNT;
            longs[i] = 0;
            doubles[i] = 0.0;
        }
    }

    void add(InternalRow r) {
        for (int i = 0; i < aggs.length; i++) {
            Aggregate a = aggs[i];
            if (a.kind() == FixedWalk.COUNT_ALL) {
                longs[i]++;
                continue;
            }
            if (r.isNullAt(a.column())) {
                continue;
            }
            if (a.kind() == FixedWalk.COUNT) {
                longs[i]++;
            } else if (a.isDouble()) {
                addDouble(i, a.kind(), r.getDouble(a.column()));
            } else {
                addLong(i, a.kind(), a.type().equals(DataTypes.IntegerType) ? r.getInt(a.column())
                        : r.getLong(a.column()));
            }
        }
    }

    private void addDouble(int i, int kind, double x) {
        if (kind == FixedWalk.SUM) {
            doubles[i] = (seen[i] ? doubles[i] : 0.0) + x;  // Spark: coalesce(sum, 0.0) + x (0.0 + -0.0 is 0.0)
        } else if (!seen[i] || (kind == FixedWalk.MIN ? compare(x, doubles[i]) < 0 : compare(x, doubles[i]) > 0)) {
            doubles[i] = x;
        }
        seen[i] = true;
    }

    private void addLong(int i, int kind, long x) {
        if (kind == FixedWalk.SUM) {
            long sum = seen[i] ? longs[i] : 0L;
            longs[i] = ansi ? Math.addExact(sum, x) : sum + x;
        } else if (!seen[i] || (kind == FixedWalk.MIN ? x < longs[i] : x > longs[i])) {
            longs[i] = x;
        }
        seen[i] = true;
    }

    /** Spark's order of doubles (SQLOrderingUtil.compareDoubles): equal values (-0.0 and 0.0 too) and two NaNs
     * compare equal, NaN is above every other value. */
    static int compare(double x, double y) {
        return x == y ? 0 : Double.compare(x, y);
    }

    /** The current values into {@code out} from {@code at}, as Spark's result types. */
    void values(Object[] out, int at) {
        for (int i = 0; i < aggs.length; i++) {
            Aggregate a = aggs[i];
            Object v;
            if (!seen[i]) {
                v = null;
            } else if (a.kind() <= FixedWalk.COUNT) {
                v = longs[i];
            } else if (a.isDouble()) {
                v = doubles[i];
            } else if (a.kind() != FixedWalk.SUM && a.type().equals(DataTypes.IntegerType)) {
                v = (int) longs[i];
            } else {
                v = longs[i];
            }
            out[at + i] = v;
        }
    }
}
