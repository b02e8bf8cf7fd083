package replayharness;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.operators.AbstractUdfStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.ProcessingTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.util.OutputTag;

/**
 * Runs every case file (*.case) of a directory as its own parallelism-1 Flink job on ONE MiniCluster started once,
 * and writes <id>.out (or <id>.err with the failure) per case into the output directory.
 *
 * Usage: HarnessMain <cases-dir> <out-dir> [concurrent-jobs]
 */
public class HarnessMain {
    public static void main(String[] args) throws Exception {
        Path casesDir = Paths.get(args[0]);
        Path outDir = Paths.get(args[1]);
        int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        Files.createDirectories(outDir);
        List<Path> files;
        try (Stream<Path> s = Files.list(casesDir)) {
            files = s.filter(p -> p.toString().endsWith(".case")).sorted().collect(Collectors.toList());
        }

        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_PORT, "0");
        MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(concurrency)
                .build());
        cluster.start();
        int failed = 0;
        try {
            ExecutorService pool = Executors.newFixedThreadPool(concurrency);
            List<Future<Boolean>> results = new ArrayList<>();
            for (Path f : files) {
                results.add(pool.submit(() -> runCase(cluster, f, outDir)));
            }
            for (Future<Boolean> r : results) {
                if (!r.get()) failed++;
            }
            pool.shutdown();
        } finally {
            cluster.closeAsync().get();
        }
        System.err.println("flink harness: " + files.size() + " cases, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    private static boolean runCase(MiniCluster cluster, Path file, Path outDir) {
        String id = file.getFileName().toString().replaceFirst("\\.case$", "");
        try {
            CaseSpec spec = CaseSpec.read(file);
            // No rows and no ticks: nothing can happen (and Flink's collection source refuses an empty one).
            if (!spec.events.isEmpty()) {
                cluster.executeJobBlocking(buildJob(spec));
            }
            Outputs o = Outputs.remove(spec.id);
            List<String> lines = o == null ? List.of() : o.snapshot();
            Path tmp = outDir.resolve(id + ".out.tmp");
            Files.write(tmp, lines, StandardCharsets.UTF_8);
            Files.move(tmp, outDir.resolve(id + ".out"));
            return true;
        } catch (Throwable t) {
            StringWriter sw = new StringWriter();
            t.printStackTrace(new PrintWriter(sw));
            try {
                Files.writeString(outDir.resolve(id + ".err"), sw.toString());
            } catch (Exception ignored) {
                // nothing better to do: the driver reports the missing output
            }
            return false;
        }
    }

    /**
     * One case's job: parallelism 1, streaming. The source emits no watermarks of its own and no periodic emission
     * runs on the wall clock: every watermark comes from the replay operator (none under processing time).
     */
    private static StreamExecutionEnvironment caseEnvironment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
        env.getConfig().setAutoWatermarkInterval(0L);
        return env;
    }

    static JobGraph buildJob(CaseSpec spec) {
        if ("processing".equals(spec.time)) return buildProcessingTimeJob(spec);
        StreamExecutionEnvironment env = caseEnvironment();
        TypeInformation<Ev> evType = TypeInformation.of(Ev.class);
        DataStream<Ev> source = env.fromData(spec.events, evType).name("log " + spec.id);
        DataStream<Ev> stamped = source.transform("replay-watermarks", evType, new ReplayWatermarkOperator(spec));
        // The job's filter: every row has driven the watermarks above; the dropped ones reach no window (nor the
        // late side output). Without a filter every row is windowed and the operator passes everything.
        DataStream<Ev> kept = stamped.filter(new Windowed()).name("filter");

        OutputTag<Ev> lateTag = new OutputTag<>("late", evType);
        WindowedStream<Ev, String, TimeWindow> windowed = kept
                .keyBy(new KeyOf())
                .window(assigner(spec, false))
                .allowedLateness(Duration.ofMillis(spec.lateness))
                .sideOutputLateData(lateTag)
                .trigger(new RecordingTrigger(spec.id));
        SingleOutputStreamOperator<String> fired = windowed.process(new FiringFunction(spec.id));
        fired.sinkTo(new DiscardingSink<>());
        fired.getSideOutput(lateTag).process(new LateFunction(spec.id)).sinkTo(new DiscardingSink<>());
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * window.time processing: source (rows in replay order, then a tick at the range end) → keyBy(key) →
     * ClockOperator → Flink's WindowOperator (WindowOperatorBuilder: processing-time assigner, ProcessingTimeTrigger
     * wrapped only to record, no lateness) with a ManualProcessingTimeService instead of the task's
     * SystemProcessingTimeService. The ClockOperator is chained to the window operator (one task thread): it moves
     * the manual clock to each row's arrival before handing the row on, so the assigner sees processing time =
     * arrival, and timers due strictly before it fire first. No watermarks: the source emits none.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static JobGraph buildProcessingTimeJob(CaseSpec spec) {
        StreamExecutionEnvironment env = caseEnvironment();
        TypeInformation<Ev> evType = TypeInformation.of(Ev.class);
        DataStream<Ev> source = env.fromData(spec.events, evType).name("log " + spec.id);
        DataStream<Ev> clocked = source.keyBy(new KeyOf()).transform("replay-clock", evType, new ClockOperator(spec));
        // The job's filter after the clock has seen every row (processing time runs whatever the filter keeps).
        DataStream<Ev> kept = clocked.filter(new Windowed()).name("filter");
        KeyedStream<Ev, String> keyed = DataStreamUtils.reinterpretAsKeyedStream(kept, new KeyOf(), Types.STRING);

        WindowOperatorBuilder<Ev, String, TimeWindow> builder = new WindowOperatorBuilder<>(
                (WindowAssigner) assigner(spec, true), new ProcessingRecordingTrigger(spec.id), env.getConfig(),
                evType, new KeyOf(), Types.STRING);
        OneInputStreamOperator<Ev, String> window = builder.process(new FiringFunction(spec.id));
        ManualTimeOperatorFactory<Ev, String> factory =
                new ManualTimeOperatorFactory<>((AbstractUdfStreamOperator<String, ?>) window, spec.id);
        keyed.transform("window " + builder.generateOperatorName(), Types.STRING, factory).sinkTo(new DiscardingSink<>());
        return env.getStreamGraph().getJobGraph();
    }

    /** The case's window assigner on event time, or on processing time (the window operator's clock). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static WindowAssigner<Object, TimeWindow> assigner(CaseSpec spec, boolean processingTime) {
        Duration size = Duration.ofMillis(spec.size), offset = Duration.ofMillis(spec.offset);
        Duration slide = Duration.ofMillis(spec.slide), gap = Duration.ofMillis(spec.gap);
        switch (spec.window) {
            case "tumbling":
                return processingTime ? (WindowAssigner) TumblingProcessingTimeWindows.of(size, offset)
                        : (WindowAssigner) TumblingEventTimeWindows.of(size, offset);
            case "sliding":
                return processingTime ? (WindowAssigner) SlidingProcessingTimeWindows.of(size, slide, offset)
                        : (WindowAssigner) SlidingEventTimeWindows.of(size, slide, offset);
            case "cumulate":
                if (processingTime) throw new IllegalArgumentException("cumulate windows on processing time");
                return (WindowAssigner) new CumulativeWindows(spec.size, spec.step, spec.offset);
            case "session":
                return processingTime ? (WindowAssigner) ProcessingTimeSessionWindows.withGap(gap)
                        : (WindowAssigner) EventTimeSessionWindows.withGap(gap);
            default:
                throw new IllegalArgumentException("window " + spec.window);
        }
    }
}
