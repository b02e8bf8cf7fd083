package replayharness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.table.runtime.operators.window.groupwindow.assigners.CumulativeWindowAssigner;

/**
 * Flink SQL's CUMULATE windows on the DataStream window operator: which windows a row belongs to is Flink's own
 * table-runtime assigner (`CumulativeWindowAssigner`, the one the planner uses for a CUMULATE window aggregate with
 * allowed lateness), each of its windows handed to the window operator as the DataStream `TimeWindow` of the same
 * bounds. Firing, lateness and the late side output are then the window operator's, as for the other types.
 */
public class CumulativeWindows extends WindowAssigner<Object, TimeWindow> {
    private final CumulativeWindowAssigner table;

    public CumulativeWindows(long maxSize, long step, long offset) {
        this.table = CumulativeWindowAssigner.of(Duration.ofMillis(maxSize), Duration.ofMillis(step))
                .withOffset(Duration.ofMillis(offset)).withEventTime();
    }

    @Override
    public Collection<TimeWindow> assignWindows(Object element, long timestamp, WindowAssignerContext context) {
        List<TimeWindow> windows = new ArrayList<>();
        for (org.apache.flink.table.runtime.operators.window.TimeWindow w : table.assignWindows(null, timestamp)) {
            windows.add(new TimeWindow(w.getStart(), w.getEnd()));
        }
        return windows;
    }

    @Override
    public Trigger<Object, TimeWindow> getDefaultTrigger() {
        return EventTimeTrigger.create();
    }

    @Override
    public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
        return new TimeWindow.Serializer();
    }

    @Override
    public boolean isEventTime() {
        return true;
    }
}
