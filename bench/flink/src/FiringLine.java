package replaybench;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** One output line per firing: key, start, end, watermark, then the aggregates (ValueAggregates, config order). */
public class FiringLine extends ProcessWindowFunction<String, String, String, TimeWindow> {
    @Override
    public void process(String key, Context ctx, Iterable<String> aggs, Collector<String> out) {
        TimeWindow w = ctx.window();
        out.collect(key + "\t" + w.getStart() + "\t" + w.getEnd() + "\t" + ctx.currentWatermark() + "\t"
                + aggs.iterator().next());
    }

    /** The column names of the lines, tab-separated: what bench/crosscheck.py reads them by. */
    static String header(BenchSpec spec) {
        return "key\twindow_start\twindow_end\twm\t" + String.join("\t", spec.aggNames);
    }
}
