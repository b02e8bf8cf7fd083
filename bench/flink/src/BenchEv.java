package replaybench;

/** One source element: a log row (ROW) or a periodic tick marker (TICK). A Flink POJO (public fields). */
public class BenchEv {
    public static final byte ROW = 0;
    public static final byte TICK = 1;

    public byte kind;
    public int split; // index into the sorted declared splits
    public long offset;
    public long arrival; // for a tick: the tick time
    public long eventTime;
    public long value; // a long, or a double's bits (BenchSpec.doubles): the 8 bytes of the record
    public String key = "";

    public BenchEv() {}
}
