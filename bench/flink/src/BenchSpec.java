package replaybench;

import java.io.IOException;
import java.io.Reader;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The job settings, from the .properties file prepare.py writes next to the events (durations in ms, -1 = none):
 * also the type of `value` (long or double) and the config's aggregates, names and operations (count, sum, min, max)
 * in the config's order.
 */
public class BenchSpec implements Serializable {
    public String strategy;
    public long delay, interval, idleTimeout;
    public boolean perEvent, flush;
    public String window;
    public long size, slide, offset, gap, lateness;
    public int splits;
    public boolean doubles; // `value` is a double (its bits in BenchEv.value), else a long
    public String[] aggNames, aggOps;

    static BenchSpec read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        }
        BenchSpec s = new BenchSpec();
        s.strategy = p.getProperty("strategy");
        s.delay = num(p, "delay");
        s.perEvent = "per_event".equals(p.getProperty("emit"));
        s.interval = num(p, "interval");
        s.idleTimeout = num(p, "idle");
        s.window = p.getProperty("window");
        s.size = num(p, "size");
        s.slide = num(p, "slide");
        s.offset = Math.max(0, num(p, "offset"));
        s.gap = num(p, "gap");
        s.lateness = Math.max(0, num(p, "lateness"));
        s.flush = "flush".equals(p.getProperty("eoi"));
        s.splits = (int) num(p, "splits");
        String type = p.getProperty("value");
        if (!"long".equals(type) && !"double".equals(type)) throw new IllegalArgumentException("value type " + type);
        s.doubles = "double".equals(type);
        if (p.getProperty("aggregates") == null)
            throw new IllegalArgumentException(file + ": no aggregates (an older prepare.py wrote it: run it again)");
        String[] aggs = p.getProperty("aggregates").split(",");
        s.aggNames = new String[aggs.length];
        s.aggOps = new String[aggs.length];
        for (int i = 0; i < aggs.length; i++) {
            String[] nameOp = aggs[i].split(":");
            s.aggNames[i] = nameOp[0];
            s.aggOps[i] = nameOp[1];
            if (!java.util.Set.of("count", "sum", "min", "max").contains(s.aggOps[i]))
                throw new IllegalArgumentException("aggregate " + aggs[i]);
        }
        if (num(p, "silence") >= 0) throw new IllegalArgumentException("the bench job has no silence advance");
        return s;
    }

    private static long num(Properties p, String k) {
        String v = p.getProperty(k);
        return v == null || v.equals("-") ? -1 : Long.parseLong(v);
    }
}
