"""Does the backfill match production? The replay's outputs against the live job's output (`replay compare`),
every difference classified and explained, and the settings calibrated against it (`replay tune --against-live`).

One concept per module:
- live.py: reading the live output (its sink, its late side output) and its column mapping, checked;
- replay_side.py: the replay's side (its outputs or an engine result) and the partitions compared;
- rules.py: the exactness rule per aggregate (exact, or a floating-point tolerance);
- matching.py: matching per (key, window): the last firing, or every firing when the live sink keeps updates;
- classify.py: equal, duplicate, value differs, replay only, live only; late rows on one side only; per partition;
- explain.py: each difference explained, from the evidence the replay has (evidence.py: late rows, who held the
  watermark, idle spans; split_read.py: rows per split, a split never read), one sentence per finding
  (window_text.py), and what the differences together suggest (hints.py, changed_aggregate.py; wording.py: how
  times and counts are written);
- diagnosis.py: which setting differs (out-of-orderness, idle timeout or emission interval, allowed lateness, the
  watermark's flavour, a side input holding the live watermark),
  from cause tests with evidence and confidence (figures: watermark_shift.py, silences.py,
  gathered by diagnosis_evidence.py); settings_search.py: confirming it by replays, one setting at a time, then a
  second on top of the closest (a calibration grid's replays reused);
- output.py, page.py: compare/ (per-window table, per-partition summary, the page);
- run.py: one comparison end to end; summary.py: its summary read as one line, and its diagnosis (`diagnosis`:
  what summary.json, the page, the why-report's "versus live" and the runs page all show; no Spark).
Elsewhere: `replay compare` is commands/compare.py, the agreement of each what-if variant (`replay tune
--against-live`) tuning/calibrate.py, the backfill DAG's optional compare task orchestration/compare_task.py, the live
parity suite's batch quality/parity.py, the why-report's "versus live" entry why/versus_live.py.
Spark is imported by the modules that need it, not by this package.
"""
