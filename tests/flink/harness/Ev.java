package replayharness;

/** One element of a case's source: a log row (kind ROW) or a periodic tick marker (kind TICK). A Flink POJO. */
public class Ev {
    public static final int ROW = 0;
    public static final int TICK = 1;

    public int kind;
    public int split; // index into the case's declared split list (sorted names)
    public long offset;
    public long arrival; // for a tick: the tick time T
    public long eventTime;
    public long value; // payload column `value`: what sum() aggregates
    public String key = ""; // the row's key as JSON text, opaque here
    public boolean windowed = true; // the job's filter keeps the row (the case file's verdict; no filter: true)

    public Ev() {}

    static Ev tick(long t) {
        Ev e = new Ev();
        e.kind = TICK;
        e.arrival = t;
        return e;
    }
}
