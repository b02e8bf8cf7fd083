package replayharness;

import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Processing-time cases: the replay clock, chained in front of the window operator (same task thread). Before each
 * row it moves the window operator's {@link ManualProcessingTimeService} to the row's arrival time (timers due
 * strictly before it fire first), then hands the row on; a tick marker (the range end, written by the driver) only
 * moves the clock. With end_of_input flush, the end of input moves the clock to +inf (every timer fires: the
 * harness's own "fire all" step, labelled end_of_input); with hold nothing more fires.
 */
public class ClockOperator extends AbstractStreamOperator<Ev> implements OneInputStreamOperator<Ev, Ev>, BoundedOneInput {
    private final CaseSpec spec;

    public ClockOperator(CaseSpec spec) {
        this.spec = spec; // chained by default (the factory's chaining strategy is ALWAYS)
    }

    private ManualProcessingTimeService clock() {
        ManualProcessingTimeService s = Outputs.of(spec.id).processingTime;
        if (s == null) throw new IllegalStateException("the window operator has no manual processing-time service");
        return s;
    }

    @Override
    public void processElement(StreamRecord<Ev> record) throws Exception {
        Ev e = record.getValue();
        clock().advance(e.arrival);
        if (e.kind == Ev.ROW) output.collect(record);
    }

    @Override
    public void endInput() throws Exception {
        if (spec.flush) {
            Outputs.of(spec.id).flushing = true;
            clock().advance(Long.MAX_VALUE);
        }
    }
}
