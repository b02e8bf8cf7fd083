package replaybench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.eventtime.AscendingTimestampsWatermarks;
import org.apache.flink.api.common.eventtime.BoundedOutOfOrdernessWatermarks;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;
import org.apache.flink.api.common.eventtime.WatermarksWithIdleness;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.clock.ManualClock;

/**
 * A copy of tests/flink/harness/ReplayWatermarkOperator without its per-row recording (B/W/V/X lines kept in memory
 * would make the benchmark measure the harness, not Flink): per split Flink's own generator in WatermarksWithIdleness
 * on a ManualClock driven by the tick markers, combined by Flink's WatermarkOutputMultiplexer. Every split of
 * events.properties has its output there, a declared split without rows too (prepare.py lists the declared splits
 * and the log's, sorted, as the harness does): its generator sees no event, so it holds the stream back until its
 * idleness timer, started at its first periodic emit, marks it idle.
 */
public class BenchWatermarkOperator extends AbstractStreamOperator<BenchEv> implements OneInputStreamOperator<BenchEv, BenchEv> {
    private static final long CLOCK_BASE_NANOS = TimeUnit.HOURS.toNanos(1); // IdlenessTimer reads 0 as "unset"

    private final BenchSpec spec;
    private transient ManualClock clock;
    private transient long clockMs;
    private transient WatermarkOutputMultiplexer mux;
    private transient WatermarkGenerator<BenchEv>[] gens;
    private transient WatermarkOutput[] immediate, deferred;

    public BenchWatermarkOperator(BenchSpec spec) {
        this.spec = spec;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void open() throws Exception {
        super.open();
        clock = new ManualClock(CLOCK_BASE_NANOS);
        clockMs = Long.MIN_VALUE;
        mux = new WatermarkOutputMultiplexer(new StreamOutput());
        int n = spec.splits;
        gens = new WatermarkGenerator[n];
        immediate = new WatermarkOutput[n];
        deferred = new WatermarkOutput[n];
        for (int i = 0; i < n; i++) {
            String id = Integer.toString(i);
            mux.registerNewOutput(id);
            immediate[i] = mux.getImmediateOutput(id);
            deferred[i] = mux.getDeferredOutput(id);
            gens[i] = newGenerator();
        }
    }

    private WatermarkGenerator<BenchEv> newGenerator() {
        WatermarkGenerator<BenchEv> g;
        switch (spec.strategy) {
            case "bounded_out_of_orderness": g = new BoundedOutOfOrdernessWatermarks<>(Duration.ofMillis(spec.delay)); break;
            case "monotonous": g = new AscendingTimestampsWatermarks<>(); break;
            default: throw new IllegalArgumentException("the bench job supports bounded_out_of_orderness and monotonous, not " + spec.strategy);
        }
        if (spec.idleTimeout > 0) g = new WatermarksWithIdleness<>(g, Duration.ofMillis(spec.idleTimeout), clock);
        return g;
    }

    @Override
    public void processElement(StreamRecord<BenchEv> record) throws Exception {
        BenchEv e = record.getValue();
        if (e.kind == BenchEv.TICK) {
            long t = e.arrival;
            if (clockMs != Long.MIN_VALUE) clock.advanceTime(Duration.ofMillis(t - clockMs));
            clockMs = t;
            for (int i = 0; i < gens.length; i++) gens[i].onPeriodicEmit(deferred[i]);
            mux.onPeriodicEmit();
            return;
        }
        int i = e.split;
        gens[i].onEvent(e, e.eventTime, immediate[i]);
        output.collect(new StreamRecord<>(e, e.eventTime));
        if (spec.perEvent) gens[i].onPeriodicEmit(immediate[i]);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        if (mark.getTimestamp() == Long.MAX_VALUE && spec.flush) output.emitWatermark(mark); // the end-of-input flush
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus status) {
        // The file source has no watermarks of its own; idleness is decided here.
    }

    private final class StreamOutput implements WatermarkOutput {
        @Override
        public void emitWatermark(org.apache.flink.api.common.eventtime.Watermark w) {
            output.emitWatermark(new Watermark(w.getTimestamp()));
        }

        @Override
        public void markIdle() {
            // Not forwarded, as in the test harness: the window operator only needs the watermarks.
        }

        @Override
        public void markActive() {}
    }
}
