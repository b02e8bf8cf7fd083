package replaybench;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** One output line per firing: key, start, end, watermark, count, sum, max. */
public class FiringLine extends ProcessWindowFunction<long[], String, String, TimeWindow> {
    @Override
    public void process(String key, Context ctx, Iterable<long[]> aggs, Collector<String> out) {
        long[] a = aggs.iterator().next();
        TimeWindow w = ctx.window();
        out.collect(key + "\t" + w.getStart() + "\t" + w.getEnd() + "\t" + ctx.currentWatermark() + "\t"
                + a[0] + "\t" + a[1] + "\t" + a[2]);
    }
}
