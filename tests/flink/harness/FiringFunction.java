package replayharness;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * One F line per firing: key, start, end, fire_index, fire_watermark, reason, count, sum(value), rows.
 *   F keyjson start end index watermark reason count sum split:offset,...
 * (the raw watermark, or for processing time the timer's time: the driver maps an end_of_input firing's to null)
 */
public class FiringFunction extends ProcessWindowFunction<Ev, String, String, TimeWindow> {
    private final String caseId;

    public FiringFunction(String caseId) {
        this.caseId = caseId;
    }

    @Override
    public void process(String key, Context ctx, Iterable<Ev> elements, Collector<String> collector) {
        Outputs o = Outputs.of(caseId);
        String reason = o.reason;
        o.reason = null;
        if (reason == null) throw new IllegalStateException("window fired without the trigger saying why");
        TimeWindow w = ctx.window();
        int index = o.fireCount.merge(key + "\u0000" + w.getStart() + "\u0000" + w.getEnd(), 1, Integer::sum) - 1;
        // event time: the window operator's watermark; processing time: the timer's time (e - 1)
        long wm = o.fireTime != null ? o.fireTime : ctx.currentWatermark();
        o.fireTime = null;
        long count = 0, sum = 0;
        List<String> rows = new ArrayList<>();
        for (Ev e : elements) {
            count++;
            sum += e.value;
            rows.add(e.split + ":" + e.offset);
        }
        o.add("F\t" + key + "\t" + w.getStart() + "\t" + w.getEnd() + "\t" + index + "\t"
                + wm + "\t" + reason + "\t" + count + "\t" + sum
                + "\t" + String.join(",", rows));
    }
}
