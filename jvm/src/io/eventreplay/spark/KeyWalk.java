package io.eventreplay.spark;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

import io.eventreplay.spark.SessionWalk.Firing;
import io.eventreplay.spark.SessionWalk.Rules;
import io.eventreplay.spark.SessionWalk.Session;

/**
 * One key's walk through its rows in replay order (SessionWalk): the live windows (sorted by start; disjoint and
 * not touching, so sorted by end too), the timer heap (entries of windows merged away are skipped when they come
 * up), the windows that fired, in the order they first fired, and the late rows.
 */
final class KeyWalk {
    private final Rules rules;
    private final List<Session> active = new ArrayList<>();
    private final PriorityQueue<Timer> timers = new PriorityQueue<>(
            Comparator.comparingLong((Timer t) -> t.maxTimestamp).thenComparingInt(t -> t.window().creator));
    final List<Session> fired = new ArrayList<>();
    final List<long[]> late = new ArrayList<>();  // (row index, late watermark)

    KeyWalk(Rules rules) {
        this.rules = rules;
    }

    /** Row i (event time t, stream watermark before it wm): merged into its window, or a late row. */
    void add(int i, long t, long wm) {
        advance(wm);
        Session win = windowFor(i, t, wm);
        if (win == null) {
            late.add(new long[] {i, wm});  // the (merged) window is past cleanup: the row is dropped
            return;
        }
        win.own.add(i);
        win.size++;
        if (win.end - 1 <= wm) {
            fire(win, rules.lateRowReason(), wm);  // a late firing with everything the window holds
        } else if (!win.pending) {
            win.pending = true;
            timers.add(new Timer(win.end - 1, win));
        }
    }

    /** The end of input: timers still registered fire (their value looked up later, or flushed, or held). */
    void finish() {
        for (Session win : active) {
            if (win.pending) {
                win.pending = false;
                fire(win, rules.pendingReason(), null);
            }
        }
    }

    /** The watermark moved to at least wm: due timers fire, then windows past their cleanup time are dropped (a
     * prefix, ends being sorted). */
    private void advance(long wm) {
        while (!timers.isEmpty() && timers.peek().maxTimestamp() <= wm) {
            Session win = timers.poll().window();
            if (win.alive && win.pending) {
                win.pending = false;
                fire(win, rules.pendingReason(), null);
            }
        }
        int gone = 0;
        while (gone < active.size() && rules.cleanup(active.get(gone).end) <= wm) {
            active.get(gone).alive = false;
            gone++;
        }
        active.subList(0, gone).clear();
    }

    private void fire(Session win, String reason, Long wm) {
        if (win.fired == 0) {
            fired.add(win);
        }
        win.firings.put(win.size, new Firing(win.fired, reason, wm));  // sizes only grow: one firing per size
        win.fired++;
    }

    /** Merges [t, t + gap) with every live window it overlaps or touches (Flink's TimeWindow.intersects); a grown
     * window can only reach windows the new one reaches itself, so one scan suffices. */
    private Session windowFor(int i, long t, long wm) {
        long lo = t;
        long hi = Rules.saturatedAdd(t, rules.gap());
        int j = startsAtOrBefore(hi);
        int k = j;
        while (k > 0 && active.get(k - 1).end >= lo) {
            k--;
        }
        List<Session> swallowed = new ArrayList<>(active.subList(k, j));
        if (swallowed.size() == 1 && swallowed.get(0).start <= lo && swallowed.get(0).end >= hi) {
            return swallowed.get(0);  // lands inside an existing window: same bounds, same window
        }
        long start = lo;
        long end = hi;
        for (Session s : swallowed) {
            start = Math.min(start, s.start);
            end = Math.max(end, s.end);
        }
        if (rules.cleanup(end) <= wm) {
            return null;
        }
        Session win = new Session(start, end, i, swallowed);
        for (Session s : swallowed) {
            s.alive = false;  // merged away: its timer is void, it never fires again
        }
        active.subList(k, j).clear();
        active.add(k, win);
        return win;
    }

    /** How many live windows start at or before {@code x} (they are sorted by start). */
    private int startsAtOrBefore(long x) {
        int lo = 0;
        int hi = active.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (active.get(mid).start <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private record Timer(long maxTimestamp, Session window) {
    }
}
