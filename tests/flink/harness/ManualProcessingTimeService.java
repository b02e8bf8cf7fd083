package replayharness;

import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceUtil;
import org.apache.flink.util.clock.Clock;

/**
 * The processing-time service of the window operator in a processing-time case, in place of the task's
 * SystemProcessingTimeService: its clock is the replay clock, moved only by {@link #advance} (ClockOperator, in the
 * window operator's own task thread).
 *
 * A timer registered for time t is due once Flink's own ProcessingTimeServiceUtil.getProcessingTimeDelay(t, now) is
 * 0, i.e. once the clock has passed t: SystemProcessingTimeService schedules a timer with exactly that delay (1 ms
 * more than t - now for a timer at or after now), so a row arriving at t still comes before a timer at t. Due
 * timers run synchronously, in timestamp order (ties: registration order), each with the timestamp it was
 * registered for, as SystemProcessingTimeService's ScheduledTask calls the callback with its target time.
 */
public final class ManualProcessingTimeService implements ProcessingTimeService {
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private long now = Long.MIN_VALUE;
    private long seq;
    private Thread owner;
    /** True while due timers run: the recording trigger checks that every firing comes from here. */
    boolean firing;

    @Override
    public long getCurrentProcessingTime() {
        return now;
    }

    @Override
    public Clock getClock() {
        return new Clock() {
            @Override
            public long absoluteTimeMillis() {
                return now;
            }

            @Override
            public long relativeTimeMillis() {
                return now;
            }

            @Override
            public long relativeTimeNanos() {
                return TimeUnit.MILLISECONDS.toNanos(now);
            }
        };
    }

    @Override
    public ScheduledFuture<?> registerTimer(long timestamp, ProcessingTimeCallback callback) {
        checkThread();
        Timer t = new Timer(timestamp, seq++, callback);
        timers.add(t);
        return t;
    }

    /** Moves the clock to {@code time} (never backwards) and runs every timer that is then due, timers registered
     * by the callbacks included. */
    void advance(long time) throws Exception {
        checkThread();
        if (time < now) throw new IllegalStateException("the replay clock went back from " + now + " to " + time);
        now = time;
        firing = true;
        try {
            Timer t;
            while ((t = timers.peek()) != null && ProcessingTimeServiceUtil.getProcessingTimeDelay(t.timestamp, now) == 0) {
                timers.poll();
                t.done = true;
                t.callback.onProcessingTime(t.timestamp);
            }
        } finally {
            firing = false;
        }
    }

    int pending() {
        return timers.size();
    }

    private void checkThread() {
        // Everything must happen in the window operator's task thread (the chained ClockOperator's too).
        if (owner == null) owner = Thread.currentThread();
        if (owner != Thread.currentThread()) {
            throw new IllegalStateException("the manual processing-time service used from two threads: "
                    + owner.getName() + " and " + Thread.currentThread().getName());
        }
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(ProcessingTimeCallback callback, long initialDelay, long period) {
        throw new UnsupportedOperationException("no periodic processing-time callbacks in the window operator");
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(ProcessingTimeCallback callback, long initialDelay, long period) {
        throw new UnsupportedOperationException("no periodic processing-time callbacks in the window operator");
    }

    @Override
    public CompletableFuture<Void> quiesce() {
        return CompletableFuture.completedFuture(null);
    }

    private final class Timer implements ScheduledFuture<Object>, Comparable<Delayed> {
        final long timestamp;
        final long order;
        final ProcessingTimeCallback callback;
        boolean cancelled, done;

        Timer(long timestamp, long order, ProcessingTimeCallback callback) {
            this.timestamp = timestamp;
            this.order = order;
            this.callback = callback;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done || cancelled) return false;
            cancelled = true;
            timers.remove(this);
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(ProcessingTimeServiceUtil.getProcessingTimeDelay(timestamp, now), TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            Timer t = (Timer) o;
            int c = Long.compare(timestamp, t.timestamp);
            return c != 0 ? c : Long.compare(order, t.order);
        }
    }
}
