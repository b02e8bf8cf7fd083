package replayharness;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-case output lines, collected in static state: the MiniCluster runs in this JVM, and every case runs at
 * parallelism 1, so each case's operators write from one task thread each (lines are synchronized anyway).
 */
final class Outputs {
    private static final Map<String, Outputs> BY_CASE = new ConcurrentHashMap<>();

    final List<String> lines = new ArrayList<>();
    /** Why the trigger fired, read by the window function right after (same thread, same call). */
    String reason;
    /**
     * Set (before the watermark is sent) when the stream's own combined watermark reaches +inf, e.g. all splits idle
     * next to a side input. Then a firing at +inf is a watermark firing; otherwise +inf can only be the flush.
     * Read by the trigger in the window's task thread, after that watermark went through the network stack.
     */
    volatile boolean streamReachedMax;
    /** Processing-time cases: the timer a firing came from (the window function reports it as fire_watermark). */
    Long fireTime;
    /** Processing-time cases: the window operator's manual processing-time service (ManualTimeOperatorFactory). */
    volatile ManualProcessingTimeService processingTime;
    /** Processing-time cases: set by ClockOperator before its end-of-input "fire all" (end_of_input flush). */
    boolean flushing;
    /** Earlier firings per (key, start, end): per-window state is not allowed for merging windows. */
    final Map<String, Integer> fireCount = new HashMap<>();

    static Outputs of(String caseId) {
        return BY_CASE.computeIfAbsent(caseId, k -> new Outputs());
    }

    static Outputs remove(String caseId) {
        return BY_CASE.remove(caseId);
    }

    synchronized void add(String line) {
        lines.add(line);
    }

    synchronized List<String> snapshot() {
        return new ArrayList<>(lines);
    }
}
