package replaybench;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;

/**
 * The config's aggregates (count, sum, min, max over `value`), incrementally, as a user's job would compute them
 * instead of buffering the rows: one accumulator per key-window, each row added in the order it reaches the window
 * (the replay order of its key), so a double sum is summed in that order. The result is the aggregates' text in the
 * config's order, tab-separated (a double as Double.toString: it reads back to the same double).
 */
public abstract class ValueAggregates<ACC> implements AggregateFunction<BenchEv, ACC, String> {
    private final String[] ops;

    ValueAggregates(BenchSpec spec) {
        this.ops = spec.aggOps.clone();
    }

    /** The aggregate function of the log's value type. */
    static ValueAggregates<?> of(BenchSpec spec) {
        return spec.doubles ? new OfDoubles(spec) : new OfLongs(spec);
    }

    abstract String column(ACC acc, String op);

    abstract TypeInformation<ACC> accumulatorType();

    @Override
    public String getResult(ACC acc) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < ops.length; i++) {
            if (i > 0) b.append('\t');
            b.append(column(acc, ops[i]));
        }
        return b.toString();
    }

    /** Long values: {count, sum, min, max}. */
    public static final class OfLongs extends ValueAggregates<long[]> {
        OfLongs(BenchSpec spec) {
            super(spec);
        }

        @Override
        public long[] createAccumulator() {
            return new long[] {0L, 0L, Long.MAX_VALUE, Long.MIN_VALUE};
        }

        @Override
        public long[] add(BenchEv e, long[] acc) {
            acc[0]++;
            acc[1] += e.value;
            acc[2] = Math.min(acc[2], e.value);
            acc[3] = Math.max(acc[3], e.value);
            return acc;
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            return new long[] {a[0] + b[0], a[1] + b[1], Math.min(a[2], b[2]), Math.max(a[3], b[3])};
        }

        @Override
        TypeInformation<long[]> accumulatorType() {
            return TypeInformation.of(long[].class);
        }

        @Override
        String column(long[] acc, String op) {
            switch (op) {
                case "count": return Long.toString(acc[0]);
                case "sum": return Long.toString(acc[1]);
                case "min": return Long.toString(acc[2]);
                default: return Long.toString(acc[3]);
            }
        }
    }

    /** Double values (BenchEv.value holds the bits): a long count and double sum, min, max. */
    public static final class OfDoubles extends ValueAggregates<OfDoubles.Acc> {
        /** A Flink POJO (public fields, no-arg constructor). */
        public static final class Acc {
            public long count;
            public double sum, min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;

            public Acc() {}
        }

        OfDoubles(BenchSpec spec) {
            super(spec);
        }

        @Override
        public Acc createAccumulator() {
            return new Acc();
        }

        @Override
        public Acc add(BenchEv e, Acc acc) {
            double v = Double.longBitsToDouble(e.value);
            acc.count++;
            acc.sum += v;
            acc.min = Math.min(acc.min, v);
            acc.max = Math.max(acc.max, v);
            return acc;
        }

        @Override
        public Acc merge(Acc a, Acc b) {
            Acc m = new Acc();
            m.count = a.count + b.count;
            m.sum = a.sum + b.sum;
            m.min = Math.min(a.min, b.min);
            m.max = Math.max(a.max, b.max);
            return m;
        }

        @Override
        TypeInformation<Acc> accumulatorType() {
            return TypeInformation.of(Acc.class);
        }

        @Override
        String column(Acc acc, String op) {
            switch (op) {
                case "count": return Long.toString(acc.count);
                case "sum": return Double.toString(acc.sum);
                case "min": return Double.toString(acc.min);
                default: return Double.toString(acc.max);
            }
        }
    }
}
