package replaybench;

import org.apache.flink.api.common.functions.AggregateFunction;

/** count(*), sum(value), max(value), incrementally: what a user's job would do instead of buffering the rows. */
public class CountSumMax implements AggregateFunction<BenchEv, long[], long[]> {
    @Override
    public long[] createAccumulator() {
        return new long[] {0L, 0L, Long.MIN_VALUE};
    }

    @Override
    public long[] add(BenchEv e, long[] acc) {
        acc[0]++;
        acc[1] += e.value;
        acc[2] = Math.max(acc[2], e.value);
        return acc;
    }

    @Override
    public long[] getResult(long[] acc) {
        return acc;
    }

    @Override
    public long[] merge(long[] a, long[] b) {
        return new long[] {a[0] + b[0], a[1] + b[1], Math.max(a[2], b[2])};
    }
}
