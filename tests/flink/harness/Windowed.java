package replayharness;

import org.apache.flink.api.common.functions.FilterFunction;

/**
 * The job's row filter, where a DataStream job puts `.filter(...)`: after `assignTimestampsAndWatermarks` (here the
 * ReplayWatermarkOperator, which has already seen every row) and before `keyBy(...).window(...)`. The predicate was
 * evaluated when the case was written (the row's `windowed`); what is checked here is where the filter stands.
 */
public class Windowed implements FilterFunction<Ev> {
    @Override
    public boolean filter(Ev e) {
        return e.windowed;
    }
}
