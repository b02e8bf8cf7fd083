package replayharness;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One case, read from a tab-separated case file written by tests/flink/flink_harness.py:
 *   C  key=value ...            the config (durations in ms; absent optional = "-")
 *   S  name  side(0|1)          the declared splits, in split order (sorted names)
 *   R  split offset arrival event value keyjson [windowed(0|1)]   a row, in replay order; windowed 0: the job's
 *                               filter drops it (after the watermark assigner, before the window)
 *   T  t                        a periodic tick, already interleaved in replay order (processing time: one, the
 *                               range end, after the last row)
 */
public class CaseSpec implements Serializable {
    public String id;
    public String strategy; // bounded_out_of_orderness | sql | monotonous
    public long delay;
    public boolean perEvent;
    public long interval;
    public long idleTimeout = -1; // -1 = none
    public long silence = -1; // -1 = none
    public String time = "event"; // event | ingestion | processing (window.time)
    public String window; // tumbling | sliding | cumulate | session
    public long size, slide, step, offset, gap, lateness;
    public boolean flush;
    public List<String> splits = new ArrayList<>();
    public List<Boolean> side = new ArrayList<>();
    public transient List<Ev> events = new ArrayList<>();

    static CaseSpec read(Path file) throws IOException {
        CaseSpec c = new CaseSpec();
        String name = file.getFileName().toString();
        c.id = name.substring(0, name.lastIndexOf('.'));
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "C": {
                    Map<String, String> kv = new HashMap<>();
                    for (int i = 1; i < f.length; i++) {
                        int eq = f[i].indexOf('=');
                        kv.put(f[i].substring(0, eq), f[i].substring(eq + 1));
                    }
                    c.strategy = kv.get("strategy");
                    c.delay = num(kv, "delay");
                    c.perEvent = "per_event".equals(kv.get("emit"));
                    c.interval = num(kv, "interval");
                    c.idleTimeout = num(kv, "idle");
                    c.silence = num(kv, "silence");
                    c.window = kv.get("window");
                    c.size = num(kv, "size");
                    c.slide = num(kv, "slide");
                    if (kv.containsKey("step")) c.step = num(kv, "step");
                    c.offset = num(kv, "offset");
                    c.gap = num(kv, "gap");
                    c.lateness = num(kv, "lateness");
                    c.flush = "flush".equals(kv.get("eoi"));
                    if (kv.containsKey("time")) c.time = kv.get("time");
                    break;
                }
                case "S":
                    c.splits.add(f[1]);
                    c.side.add("1".equals(f[2]));
                    break;
                case "R": {
                    Ev e = new Ev();
                    e.kind = Ev.ROW;
                    e.split = Integer.parseInt(f[1]);
                    e.offset = Long.parseLong(f[2]);
                    e.arrival = Long.parseLong(f[3]);
                    e.eventTime = Long.parseLong(f[4]);
                    e.value = Long.parseLong(f[5]);
                    e.key = f[6];
                    e.windowed = f.length < 8 || !"0".equals(f[7]);
                    c.events.add(e);
                    break;
                }
                case "T":
                    c.events.add(Ev.tick(Long.parseLong(f[1])));
                    break;
                default:
                    throw new IOException(file + ": unknown line kind " + f[0]);
            }
        }
        if (c.strategy == null || c.window == null) throw new IOException(file + ": no C line");
        return c;
    }

    private static long num(Map<String, String> kv, String k) {
        String v = kv.get(k);
        return v == null || v.equals("-") ? -1 : Long.parseLong(v);
    }

    /** watermark = max_ts - lag (SEMANTICS §2): +1 for Flink's bounded out-of-orderness (and monotonous). */
    long lag() {
        switch (strategy) {
            case "bounded_out_of_orderness": return delay + 1;
            case "sql": return delay;
            case "monotonous": return 1;
            default: throw new IllegalArgumentException("strategy " + strategy);
        }
    }
}
