package replaybench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RpcOptions;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.OutputTag;

/**
 * The Flink job a user would run instead of the replay, on the same log: a FileSource streaming the events file
 * (rows and ticks in replay order, parallelism 1 so the order is the replay order) -> the replay watermark operator
 * (Flink's generators, idleness and multiplexer on the replay clock) -> keyBy(key).window(...).allowedLateness(...)
 * .sideOutputLateData(...).aggregate(the config's count/sum/min/max over the value, as a long or a double:
 * ValueAggregates) with the window parallelism given -> firings and late rows written as text files, and the firings'
 * column names in firings.columns.
 *
 * Usage: BenchMain <events.bin> <events.properties> <out-dir> [window-parallelism]
 * Prints one line: "flink-bench firings=N late=M seconds=S cpu_seconds=C ..." (job wall and CPU time, without
 * the JVM start).
 */
public class BenchMain {
    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        Path events = Paths.get(args[0]);
        BenchSpec spec = BenchSpec.read(Paths.get(args[1]));
        Path outDir = Paths.get(args[2]);
        int par = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        Files.createDirectories(outDir);

        Configuration conf = new Configuration();
        // On a starved machine the MiniCluster's job submission outlasts the default 10 s RPC ask timeout.
        conf.set(RpcOptions.ASK_TIMEOUT_DURATION, Duration.ofMinutes(10));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(par, conf);
        env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
        env.getConfig().setAutoWatermarkInterval(0L); // every watermark comes from the replay operator
        env.getConfig().enableObjectReuse();

        TypeInformation<BenchEv> evType = TypeInformation.of(BenchEv.class);
        FileSource<BenchEv> source = FileSource.forRecordStreamFormat(new BenchFormat(),
                new org.apache.flink.core.fs.Path(events.toAbsolutePath().toUri())).build();
        DataStream<BenchEv> rows = env.fromSource(source, WatermarkStrategy.noWatermarks(), "log").setParallelism(1)
                .transform("replay-watermarks", evType, new BenchWatermarkOperator(spec)).setParallelism(1);

        OutputTag<BenchEv> lateTag = new OutputTag<>("late", evType);
        WindowedStream<BenchEv, String, TimeWindow> windows = rows
                .keyBy(e -> e.key, TypeInformation.of(String.class))
                .window(assigner(spec))
                .allowedLateness(Duration.ofMillis(spec.lateness))
                .sideOutputLateData(lateTag);
        SingleOutputStreamOperator<String> fired = fire(windows, ValueAggregates.of(spec)).setParallelism(par);
        Files.writeString(outDir.resolve("firings.columns"), FiringLine.header(spec) + "\n");
        fired.sinkTo(new LineSink(outDir.toString(), "firings")).setParallelism(par);
        fired.getSideOutput(lateTag)
                .map(e -> e.split + "\t" + e.offset + "\t" + e.key, TypeInformation.of(String.class)).setParallelism(par)
                .sinkTo(new LineSink(outDir.toString(), "late")).setParallelism(par);

        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long jobStart = System.nanoTime();
        env.execute("bench " + events.getFileName()); // starts the local MiniCluster too (a few seconds)
        long t1 = System.nanoTime();
        long cpu1 = os.getProcessCpuTime();
        long firings = LineSink.COUNTS.containsKey("firings") ? LineSink.COUNTS.get("firings").get() : 0;
        long late = LineSink.COUNTS.containsKey("late") ? LineSink.COUNTS.get("late").get() : 0;
        System.out.printf("flink-bench firings=%d late=%d seconds=%.3f cpu_seconds=%.3f setup_seconds=%.3f%n",
                firings, late, (t1 - jobStart) / 1e9, (cpu1 - cpu0) / 1e9, (jobStart - t0) / 1e9);
        System.exit(0);
    }

    private static <ACC> SingleOutputStreamOperator<String> fire(WindowedStream<BenchEv, String, TimeWindow> windows,
                                                                 ValueAggregates<ACC> agg) {
        TypeInformation<String> text = TypeInformation.of(String.class);
        return windows.aggregate(agg, new FiringLine(), agg.accumulatorType(), text, text);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static WindowAssigner<Object, TimeWindow> assigner(BenchSpec s) {
        switch (s.window) {
            case "tumbling":
                return (WindowAssigner) TumblingEventTimeWindows.of(Duration.ofMillis(s.size), Duration.ofMillis(s.offset));
            case "sliding":
                return (WindowAssigner) SlidingEventTimeWindows.of(Duration.ofMillis(s.size), Duration.ofMillis(s.slide), Duration.ofMillis(s.offset));
            case "session":
                return (WindowAssigner) EventTimeSessionWindows.withGap(Duration.ofMillis(s.gap));
            default:
                throw new IllegalArgumentException("window " + s.window);
        }
    }
}
