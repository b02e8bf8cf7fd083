package replayharness;

import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * On the window's late side output: L split offset late_watermark. This operator's watermark is the window
 * operator's at the moment it dropped the row (the window forwards a watermark only after handling it, and the
 * late row is emitted while the window holds that same watermark).
 */
public class LateFunction extends ProcessFunction<Ev, String> {
    private final String caseId;

    public LateFunction(String caseId) {
        this.caseId = caseId;
    }

    @Override
    public void processElement(Ev e, Context ctx, Collector<String> collector) {
        Outputs.of(caseId).add("L\t" + e.split + "\t" + e.offset + "\t" + ctx.timerService().currentWatermark());
    }
}
