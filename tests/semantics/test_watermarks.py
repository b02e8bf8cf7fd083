"""semantics/watermarks.py, the reference's watermark generators and their combination, rule by rule: the
formula, silence advance, idleness, and the multiplexer's per-split minimum (all idle: the largest)."""
from __future__ import annotations

from event_replay.semantics.durations import NEG_INF
from event_replay.semantics.watermarks import (FormulaGenerator, IdlenessTimer, SilenceAdvancingGenerator,
                                               WatermarkMultiplexer, WithIdleness)


class Recorder:
    def __init__(self):
        self.out: list = []

    def emit_watermark(self, watermark: int) -> None:
        self.out.append(watermark)

    def mark_idle(self) -> None:
        self.out.append("idle")


def test_the_formula_is_the_largest_event_time_minus_the_lag():
    gen, rec = FormulaGenerator(100), Recorder()
    gen.on_periodic_emit(rec)
    for t in (500, 300, 700):
        gen.on_event(t)
        gen.on_periodic_emit(rec)
    assert rec.out == [NEG_INF, 400, 400, 600]


def test_silence_advances_one_interval_per_tick_after_the_wait():
    gen, rec = SilenceAdvancingGenerator(lag_ms=10, interval_ms=100, wait_ms=250), Recorder()
    gen.on_periodic_emit(rec)  # no row yet: the plain formula
    gen.on_event(1000)
    for _ in range(4):
        gen.on_periodic_emit(rec)
    assert rec.out == [NEG_INF, 990, 990, 1290, 1390]  # silent 100, 200, 300 > 250, 400
    gen.on_event(1050)  # a row below the advanced clock restarts the wait from the largest
    gen.on_periodic_emit(rec)
    assert rec.out[-1] == 1390


def test_idle_once_no_row_came_for_longer_than_the_timeout():
    timer = IdlenessTimer(300)
    timer.activity()
    assert [timer.check_if_idle(t) for t in (0, 100, 400, 401)] == [False, False, False, True]
    timer.activity()
    assert timer.check_if_idle(500) is False


def test_an_idle_split_is_marked_once_and_a_row_wakes_it():
    gen, rec = WithIdleness(FormulaGenerator(0), 200), Recorder()
    gen.on_event(50)
    for now in (0, 100, 200, 301, 400):
        gen.now = now
        gen.on_periodic_emit(rec)
    assert rec.out == [50, 50, 50, "idle"]
    gen.on_event(80)
    gen.now = 500
    gen.on_periodic_emit(rec)
    assert rec.out[-1] == 80


def test_the_stream_is_the_minimum_of_its_active_splits_and_never_goes_back():
    mux = WatermarkMultiplexer(["a", "b"])
    a, b = mux.immediate("a"), mux.immediate("b")
    a.emit_watermark(100)
    assert mux.combined == NEG_INF  # b has published nothing
    b.emit_watermark(40)
    assert mux.combined == 40
    a.emit_watermark(30)  # a split's watermark never goes back
    b.emit_watermark(70)
    assert mux.combined == 70
    a.mark_idle()
    assert (mux.combined, mux.idle) == (70, False)  # only b is active
    b.mark_idle()
    assert (mux.combined, mux.idle) == (100, True)  # all idle: the largest published


def test_deferred_outputs_combine_on_the_tick():
    mux = WatermarkMultiplexer(["a"])
    mux.deferred("a").emit_watermark(10)
    assert mux.combined == NEG_INF
    mux.on_periodic_emit()
    assert mux.combined == 10
