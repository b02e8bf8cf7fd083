package replayharness;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
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
 * Plays the source's watermark side the way Flink's SourceOperator does for a split-aware source, but driven by the
 * replay clock: one generator per split (Flink's own classes where Flink has them), wrapped in Flink's
 * WatermarksWithIdleness with a ManualClock, combined by Flink's WatermarkOutputMultiplexer.
 * Rows go downstream as StreamRecords stamped with their event time; tick markers are consumed here.
 *
 * Records (Outputs): W lines (split/stream watermark-or-idle changes), V lines (watermarks sent downstream),
 * B lines (the watermark the window operator holds when each row reaches it), X lines (idle/active signals the
 * multiplexer gives its underlying output: for inspection only).
 */
public class ReplayWatermarkOperator extends AbstractStreamOperator<Ev> implements OneInputStreamOperator<Ev, Ev> {
    /** IdlenessTimer uses clock value 0 as "unset": keep every tick well away from 0. */
    private static final long CLOCK_BASE_NANOS = TimeUnit.HOURS.toNanos(1);

    private final CaseSpec spec;

    private transient ManualClock clock;
    private transient long clockMs; // replay time the clock currently shows; Long.MIN_VALUE before the first tick
    private transient WatermarkOutputMultiplexer mux;
    private transient WatermarkGenerator<Ev>[] gens; // null for side inputs
    private transient WatermarkOutput[] immediate, deferred;
    private transient Outputs out;
    private transient long replayTime; // the tick or the row arrival being processed: stamps the W lines
    private transient long streamWm;
    private transient boolean streamIdle;
    private transient long lastEmitted; // the last watermark sent downstream: what the window operator holds
    private transient Field combinedStatus;
    private transient Method getCombined, isIdle;
    private transient long[] wm; // per split: last published watermark (as the multiplexer keeps it) ...
    private transient boolean[] idleFlag; // ... and idle flag, for the W lines

    public ReplayWatermarkOperator(CaseSpec spec) {
        this.spec = spec;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void open() throws Exception {
        super.open();
        out = Outputs.of(spec.id);
        clock = new ManualClock(CLOCK_BASE_NANOS);
        clockMs = Long.MIN_VALUE;
        streamWm = Long.MIN_VALUE;
        streamIdle = false;
        lastEmitted = Long.MIN_VALUE;
        // The combined status is package-private in Flink; read it, do not reimplement it.
        combinedStatus = WatermarkOutputMultiplexer.class.getDeclaredField("combinedWatermarkStatus");
        combinedStatus.setAccessible(true);
        Class<?> statusClass = combinedStatus.getType();
        getCombined = statusClass.getDeclaredMethod("getCombinedWatermark");
        getCombined.setAccessible(true);
        isIdle = statusClass.getDeclaredMethod("isIdle");
        isIdle.setAccessible(true);
        mux = new WatermarkOutputMultiplexer(new StreamOutput());
        int n = spec.splits.size();
        wm = new long[n];
        Arrays.fill(wm, Long.MIN_VALUE);
        idleFlag = new boolean[n];
        gens = new WatermarkGenerator[n];
        immediate = new WatermarkOutput[n];
        deferred = new WatermarkOutput[n];
        for (int i = 0; i < n; i++) {
            String id = spec.splits.get(i);
            mux.registerNewOutput(id);
            immediate[i] = new SplitOutput(i, mux.getImmediateOutput(id));
            deferred[i] = new SplitOutput(i, mux.getDeferredOutput(id));
            if (!spec.side.get(i)) {
                gens[i] = newGenerator();
            }
        }
        // Side inputs never produce watermarks: they count as +inf from the start (SEMANTICS §4), published on the
        // immediate output so that a job with side inputs only is at +inf before its first row.
        replayTime = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            if (spec.side.get(i)) immediate[i].emitWatermark(new org.apache.flink.api.common.eventtime.Watermark(Long.MAX_VALUE));
        }
    }

    private WatermarkGenerator<Ev> newGenerator() {
        WatermarkGenerator<Ev> g;
        if (spec.silence >= 0) {
            g = new Generators.SilenceAdvance(spec.lag(), spec.interval, spec.silence);
        } else {
            switch (spec.strategy) {
                case "bounded_out_of_orderness": g = new BoundedOutOfOrdernessWatermarks<>(Duration.ofMillis(spec.delay)); break;
                case "monotonous": g = new AscendingTimestampsWatermarks<>(); break;
                case "sql": g = new Generators.SqlWatermarks(spec.delay); break;
                default: throw new IllegalArgumentException("strategy " + spec.strategy);
            }
        }
        if (spec.idleTimeout > 0) {
            g = new WatermarksWithIdleness<>(g, Duration.ofMillis(spec.idleTimeout), clock);
        }
        return g;
    }

    @Override
    public void processElement(StreamRecord<Ev> record) throws Exception {
        Ev e = record.getValue();
        if (e.kind == Ev.TICK) {
            onTick(e.arrival);
            return;
        }
        replayTime = e.arrival;
        int i = e.split;
        if (gens[i] != null) gens[i].onEvent(e, e.eventTime, immediate[i]);
        out.add("B\t" + i + "\t" + e.offset + "\t" + lastEmitted);
        output.collect(new StreamRecord<>(e, e.eventTime));
        if (spec.perEvent) {
            publish(i, immediate[i]);
            recordStream();
        }
    }

    private void onTick(long t) throws Exception {
        replayTime = t;
        if (clockMs != Long.MIN_VALUE) {
            if (t <= clockMs) throw new IllegalStateException("ticks must increase: " + t + " after " + clockMs);
            clock.advanceTime(Duration.ofMillis(t - clockMs));
        }
        clockMs = t;
        for (int i = 0; i < gens.length; i++) {
            publish(i, deferred[i]);
        }
        mux.onPeriodicEmit();
        recordStream();
    }

    private void publish(int i, WatermarkOutput o) {
        if (gens[i] != null) {
            gens[i].onPeriodicEmit(o);
        } else {
            o.emitWatermark(new org.apache.flink.api.common.eventtime.Watermark(Long.MAX_VALUE));
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        // The source's own end-of-input MAX watermark: forwarded only for `flush` (that is the flush); `hold` keeps
        // the windows open as the next partition would find them.
        if (mark.getTimestamp() == Long.MAX_VALUE && spec.flush) {
            output.emitWatermark(mark);
        }
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus status) {
        // The source has no watermarks of its own; idleness is decided here.
    }

    /**
     * Records the combined status (Flink's CombinedWatermarkStatus inside the multiplexer: the stream's watermark
     * and whether all splits are idle) after each combination, as a W line when the pair changed.
     */
    private void recordStream() throws Exception {
        Object status = combinedStatus.get(mux);
        long wm = (long) getCombined.invoke(status);
        boolean idle = (boolean) isIdle.invoke(status);
        if (idle == streamIdle && wm == streamWm) return;
        streamIdle = idle;
        streamWm = wm;
        out.add("W\t" + replayTime + "\tstream\t-\t" + (idle ? "null" : Long.toString(wm)) + "\t" + (idle ? 1 : 0));
    }

    /** The multiplexer's combined output: what the source sends downstream (V lines: every value it moved to). */
    private final class StreamOutput implements WatermarkOutput {
        @Override
        public void emitWatermark(org.apache.flink.api.common.eventtime.Watermark w) {
            lastEmitted = w.getTimestamp();
            if (lastEmitted == Long.MAX_VALUE) out.streamReachedMax = true;
            out.add("V\t" + replayTime + "\t" + w.getTimestamp());
            output.emitWatermark(new Watermark(w.getTimestamp()));
        }

        @Override
        public void markIdle() {
            out.add("X\t" + replayTime + "\tidle"); // what Flink's SourceOperator would signal downstream
            // Not forwarded: the window operator only needs watermarks, and an idle status would make it ignore
            // the watermarks that follow until an ACTIVE status (Flink's WatermarkToDataOutput sends that pair).
        }

        @Override
        public void markActive() {
            out.add("X\t" + replayTime + "\tactive");
        }
    }

    /** Passes a split's publications to the multiplexer and records the split's (watermark, idle) changes. */
    private final class SplitOutput implements WatermarkOutput {
        private final int split;
        private final WatermarkOutput target;

        SplitOutput(int split, WatermarkOutput target) {
            this.split = split;
            this.target = target;
        }

        @Override
        public void emitWatermark(org.apache.flink.api.common.eventtime.Watermark w) {
            target.emitWatermark(w);
            // The multiplexer keeps the max of a split's watermarks and clears its idle flag.
            set(Math.max(wm[split], w.getTimestamp()), false);
        }

        @Override
        public void markIdle() {
            target.markIdle();
            set(wm[split], true);
        }

        @Override
        public void markActive() {
            target.markActive();
            set(wm[split], false);
        }

        private void set(long w, boolean idle) {
            boolean changed = idle != idleFlag[split] || (!idle && w != wm[split]);
            wm[split] = w;
            idleFlag[split] = idle;
            if (changed) {
                out.add("W\t" + replayTime + "\tsplit\t" + split + "\t" + (idle ? "null" : Long.toString(w)) + "\t" + (idle ? 1 : 0));
            }
        }
    }
}
