package replayharness;

import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/** Flink's EventTimeTrigger, unchanged in behaviour; it only notes why it fired, for the window function. */
public class RecordingTrigger extends DelegatingTrigger {
    @SuppressWarnings({"unchecked", "rawtypes"})
    public RecordingTrigger(String caseId) {
        super(caseId, (Trigger) EventTimeTrigger.create());
    }

    @Override
    public TriggerResult onElement(Object element, long timestamp, TimeWindow window, TriggerContext ctx) throws Exception {
        TriggerResult r = inner.onElement(element, timestamp, window, ctx);
        if (r.isFire()) Outputs.of(caseId).reason = "late_row";
        return r;
    }

    @Override
    public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
        TriggerResult r = inner.onEventTime(time, window, ctx);
        if (r.isFire()) {
            Outputs o = Outputs.of(caseId);
            o.reason = ctx.getCurrentWatermark() == Long.MAX_VALUE && !o.streamReachedMax ? "end_of_input" : "watermark";
        }
        return r;
    }

    @Override
    public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
        return inner.onProcessingTime(time, window, ctx);
    }
}
