package replaybench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/** Writes lines to <dir>/<name>-<subtask>.tsv; counts them in this JVM (the MiniCluster runs here) for the report. */
public class LineSink implements Sink<String> {
    static final ConcurrentHashMap<String, AtomicLong> COUNTS = new ConcurrentHashMap<>();
    private final String dir, name;

    public LineSink(String dir, String name) {
        this.dir = dir;
        this.name = name;
    }

    @Override
    public SinkWriter<String> createWriter(WriterInitContext ctx) throws IOException {
        int sub = ctx.getTaskInfo().getIndexOfThisSubtask();
        Path p = Paths.get(dir, name + "-" + sub + ".tsv");
        BufferedWriter w = Files.newBufferedWriter(p, StandardCharsets.UTF_8);
        AtomicLong count = COUNTS.computeIfAbsent(name, k -> new AtomicLong());
        return new SinkWriter<String>() {
            @Override
            public void write(String line, Context c) throws IOException {
                w.write(line);
                w.write('\n');
                count.incrementAndGet();
            }

            @Override
            public void flush(boolean endOfInput) throws IOException {
                w.flush();
            }

            @Override
            public void close() throws IOException {
                w.close();
            }
        };
    }
}
