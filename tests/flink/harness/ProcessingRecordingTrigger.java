package replayharness;

import org.apache.flink.streaming.api.windowing.triggers.ProcessingTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * Flink's ProcessingTimeTrigger, unchanged in behaviour; it only notes why and at which timer it fired, for the
 * window function, and checks that the timer came from the case's manual processing-time service.
 */
public class ProcessingRecordingTrigger extends DelegatingTrigger {
    @SuppressWarnings({"unchecked", "rawtypes"})
    public ProcessingRecordingTrigger(String caseId) {
        super(caseId, (Trigger) ProcessingTimeTrigger.create());
    }

    @Override
    public TriggerResult onElement(Object element, long timestamp, TimeWindow window, TriggerContext ctx) throws Exception {
        TriggerResult r = inner.onElement(element, timestamp, window, ctx);
        if (r.isFire()) throw new IllegalStateException("ProcessingTimeTrigger fired on an element");
        return r;
    }

    @Override
    public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
        TriggerResult r = inner.onEventTime(time, window, ctx);
        if (r.isFire()) throw new IllegalStateException("ProcessingTimeTrigger fired on event time");
        return r;
    }

    @Override
    public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
        TriggerResult r = inner.onProcessingTime(time, window, ctx);
        if (r.isFire()) {
            Outputs o = Outputs.of(caseId);
            ManualProcessingTimeService s = o.processingTime;
            if (s == null || !s.firing || ctx.getCurrentProcessingTime() != s.getCurrentProcessingTime()) {
                throw new IllegalStateException("a processing-time timer fired outside the manual service");
            }
            o.reason = o.flushing ? "end_of_input" : "watermark";
            o.fireTime = time;
        }
        return r;
    }
}
