package io.eventreplay.spark;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Session windows' sequential pass: each key's rows in replay order, merged as Flink's MergingWindowSet merges
 * them (docs/semantics.md, "Windows"; engine/windows/sessions.py calls it).
 *
 * <p>The input is the rows (every input column plus {@code wm_before}, the stream watermark just before the row),
 * partitioned by key and sorted within partitions by (key, arrival_time, split, offset). Each key is walked alone,
 * holding only its own rows. A row opens [t, t + gap) and merges with every live window it overlaps or touches; the
 * merged window keeps the rows of the windows it swallowed first, then its own, so every firing holds a prefix of
 * its rows. Before each row, the event-time timers its watermark reached fire (their stream value is looked up
 * later: the pending reason) and windows past their cleanup time (max timestamp + lateness) are dropped. A row
 * whose (merged) window is already past cleanup is a late row; one landing in a window whose max timestamp the
 * watermark has passed fires it at once (the late-row reason, at that watermark). At the end, timers still
 * registered fire as pending. O(n log n) per key: a heap of timers, live windows sorted by start.
 *
 * <p>Output: per fired window, one element per row it holds (kind m, the window's id = its creating row's split
 * and offset, bounds, position, and the firing made at that size if any); per late row one record (kind l, its
 * late watermark in fire_watermark). Every record carries its row's input columns.
 */
public final class SessionWalk {
    static final StructField[] PASS_FIELDS = {
        DataTypes.createStructField("kind", DataTypes.StringType, false),
        DataTypes.createStructField("__wid_split", DataTypes.StringType, true),
        DataTypes.createStructField("__wid_offset", DataTypes.LongType, true),
        DataTypes.createStructField("__ws", DataTypes.LongType, true),
        DataTypes.createStructField("__we", DataTypes.LongType, true),
        DataTypes.createStructField("__pos", DataTypes.LongType, true),
        DataTypes.createStructField("fire_index", DataTypes.LongType, true),
        DataTypes.createStructField("fire_reason", DataTypes.StringType, true),
        DataTypes.createStructField("fire_watermark", DataTypes.LongType, true),
    };

    private SessionWalk() {
    }

    /**
     * The pass over {@code sorted} (see the class doc); {@code pendingReason} marks timer firings whose watermark
     * is looked up later, {@code lateRowReason} late firings.
     */
    public static Dataset<Row> walk(Dataset<Row> sorted, long gap, long lateness, String pendingReason,
                                    String lateRowReason) {
        if (gap <= 0) {
            throw new IllegalArgumentException("gap must be positive, got " + gap);
        }
        if (lateness < 0) {
            throw new IllegalArgumentException("lateness must not be negative, got " + lateness);
        }
        StructType in = sorted.schema();
        StructType out = in;
        for (StructField f : PASS_FIELDS) {
            out = out.add(f);
        }
        Columns cols = new Columns(in.fieldIndex("key"), in.fieldIndex("split"), in.fieldIndex("offset"),
                in.fieldIndex("event_time"), in.fieldIndex("wm_before"), in.size());
        Rules rules = new Rules(gap, lateness, pendingReason, lateRowReason);
        return sorted.mapPartitions(new Pass(cols, rules), Encoders.row(out));
    }

    /** Positions of the columns the walk reads, and the input's width. */
    record Columns(int key, int split, int offset, int eventTime, int watermark, int width)
            implements java.io.Serializable {
    }

    private record Pass(Columns cols, Rules rules) implements MapPartitionsFunction<Row, Row> {
        @Override
        public Iterator<Row> call(Iterator<Row> rows) {
            return new KeyByKey(rows, cols, rules);
        }
    }

    /** The partition's output, one key's walk at a time. */
    private static final class KeyByKey implements Iterator<Row> {
        private final Iterator<Row> rows;
        private final Columns cols;
        private final Rules rules;
        private final ArrayDeque<Row> ready = new ArrayDeque<>();
        private Row next;

        KeyByKey(Iterator<Row> rows, Columns cols, Rules rules) {
            this.rows = rows;
            this.cols = cols;
            this.rules = rules;
            this.next = rows.hasNext() ? rows.next() : null;
        }

        @Override
        public boolean hasNext() {
            while (ready.isEmpty() && next != null) {
                walkOneKey();
            }
            return !ready.isEmpty();
        }

        @Override
        public Row next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return ready.poll();
        }

        private void walkOneKey() {
            Object key = next.get(cols.key());
            List<Row> keyRows = new ArrayList<>();
            while (next != null && Objects.equals(next.get(cols.key()), key)) {
                keyRows.add(next);
                next = rows.hasNext() ? rows.next() : null;
            }
            KeyWalk walk = new KeyWalk(rules);
            for (int i = 0; i < keyRows.size(); i++) {
                Row r = keyRows.get(i);
                walk.add(i, r.getLong(cols.eventTime()), r.getLong(cols.watermark()));
            }
            walk.finish();
            emit(walk, keyRows);
        }

        private void emit(KeyWalk walk, List<Row> keyRows) {
            for (Session win : walk.fired) {
                Row creator = keyRows.get(win.creator);
                long pos = 0;
                for (int r : win.rows()) {
                    pos++;
                    Firing f = win.firings.get(pos);
                    ready.add(withPass(keyRows.get(r), "m", creator.getString(cols.split()), creator.getLong(cols.offset()),
                            win.start, win.end, pos, f == null ? null : f.index(), f == null ? null : f.reason(),
                            f == null ? null : f.watermark()));
                }
            }
            for (long[] late : walk.late) {
                ready.add(withPass(keyRows.get((int) late[0]), "l", null, null, null, null, null, null, null,
                        late[1]));
            }
        }

        private Row withPass(Row row, Object... pass) {
            Object[] values = new Object[cols.width() + pass.length];
            for (int i = 0; i < cols.width(); i++) {
                values[i] = row.get(i);
            }
            System.arraycopy(pass, 0, values, cols.width(), pass.length);
            return RowFactory.create(values);
        }
    }

    /** The session rules: gap, allowed lateness, and the reasons the firings are marked with. */
    record Rules(long gap, long lateness, String pendingReason, String lateRowReason) implements java.io.Serializable {
        /** The window's cleanup time: its max timestamp plus the lateness, at most +inf (Long.MAX_VALUE). */
        long cleanup(long end) {
            return saturatedAdd(end - 1, lateness);
        }

        static long saturatedAdd(long a, long b) {
            long sum = a + b;
            return ((a ^ sum) & (b ^ sum)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : sum;
        }
    }

    /** A firing of a window: its index, reason and watermark (null for a pending timer). */
    record Firing(long index, String reason, Long watermark) {
    }

    /** A session window in the walk: {@code children} are the windows it swallowed (their rows come first). */
    static final class Session {
        final long start;
        final long end;
        final int creator;
        final List<Session> children;
        final List<Integer> own = new ArrayList<>();  // rows added while the window had these bounds
        long size;
        long fired;  // firings so far: the next fire_index
        boolean pending;  // an event-time timer at end - 1 is registered and has not fired
        boolean alive = true;
        final java.util.Map<Long, Firing> firings = new java.util.HashMap<>();  // size at the firing -> firing

        Session(long start, long end, int creator, List<Session> children) {
            this.start = start;
            this.end = end;
            this.creator = creator;
            this.children = children;
            for (Session c : children) {
                size += c.size;
            }
        }

        /** Its rows in membership order: swallowed windows' rows (recursively), then its own. Iterative: merge
         * chains can be long. */
        List<Integer> rows() {
            List<Integer> out = new ArrayList<>();
            ArrayDeque<Object> stack = new ArrayDeque<>();
            stack.push(this);
            while (!stack.isEmpty()) {
                Object item = stack.pop();
                if (item instanceof Session) {
                    Session s = (Session) item;
                    stack.push(s.own);
                    for (int i = s.children.size() - 1; i >= 0; i--) {
                        stack.push(s.children.get(i));
                    }
                } else {
                    @SuppressWarnings("unchecked")
                    List<Integer> own = (List<Integer>) item;
                    out.addAll(own);
                }
            }
            return out;
        }
    }
}
