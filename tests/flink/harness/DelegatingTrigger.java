package replayharness;

import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/** One of Flink's triggers, wrapped unchanged: subclasses only record why it fired (merging and clearing pass on). */
abstract class DelegatingTrigger extends Trigger<Object, TimeWindow> {
    protected final String caseId;
    protected final Trigger<Object, TimeWindow> inner;

    DelegatingTrigger(String caseId, Trigger<Object, TimeWindow> inner) {
        this.caseId = caseId;
        this.inner = inner;
    }

    @Override
    public void clear(TimeWindow window, TriggerContext ctx) throws Exception {
        inner.clear(window, ctx);
    }

    @Override
    public boolean canMerge() {
        return inner.canMerge();
    }

    @Override
    public void onMerge(TimeWindow window, OnMergeContext ctx) throws Exception {
        inner.onMerge(window, ctx);
    }
}
