package replayharness;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;

/** The two generators Flink does not ship in the DataStream API (SEMANTICS §2). */
final class Generators {
    private Generators() {}

    /** Flink SQL's pushed-down `ts - INTERVAL d`: watermark = max_ts - delay (no -1). */
    static final class SqlWatermarks implements WatermarkGenerator<Ev> {
        private final long delay;
        private long maxTs;

        SqlWatermarks(long delay) {
            this.delay = delay;
            this.maxTs = Long.MIN_VALUE + delay; // so that the first value is -inf
        }

        @Override
        public void onEvent(Ev e, long ts, WatermarkOutput out) {
            maxTs = Math.max(maxTs, ts);
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {
            out.emitWatermark(new Watermark(maxTs - delay));
        }
    }

    /**
     * Silence advance (SEMANTICS §2): after `wait` ms without progress the split's logical clock moves by one
     * interval per tick and the watermark follows it. Nothing happens before the split's first row.
     */
    static final class SilenceAdvance implements WatermarkGenerator<Ev> {
        private final long lag, interval, wait;
        private long maxTs;
        private boolean seen;
        private long last, logical;

        SilenceAdvance(long lag, long interval, long wait) {
            this.lag = lag;
            this.interval = interval;
            this.wait = wait;
            this.maxTs = Long.MIN_VALUE + lag;
        }

        @Override
        public void onEvent(Ev e, long ts, WatermarkOutput out) {
            maxTs = Math.max(maxTs, ts);
            last = maxTs;
            logical = maxTs;
            seen = true;
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {
            if (seen) {
                logical += interval;
                if (logical - last > wait) {
                    maxTs = logical;
                }
            }
            out.emitWatermark(new Watermark(maxTs - lag));
        }
    }
}
