#!/bin/bash
# The demo's calibration (make demo's calibrate task's command) with code $1 (a src dir) into $2
set -e
cd /work/wt/t46g
src=$1; out=$2
rm -rf $out; mkdir -p $out
[ -d /tmp/t46g/partitioned ] || .venv/bin/python -m event_replay.samples.days --out /tmp/t46g/partitioned --first-day 2024-01-01 --days 3 --rows-per-day 5000 --splits 4 --seed 7
.venv/bin/python - "$out" <<'PY'
import sys, yaml
raw = yaml.safe_load(open("jobs/configs/demo_partitioned.yaml"))
raw["source"]["path"] = "/tmp/t46g/partitioned"; raw["output"]["path"] = sys.argv[1] + "/out"
yaml.safe_dump(raw, open(sys.argv[1] + "/job.yaml", "w"))
PY
PYTHONPATH=$src nice -n 15 .venv/bin/replay tune --config $out/job.yaml --partitions 2024-01-01..2024-01-03 \
  --against-live jobs/live/demo/firings --live-format json \
  --live-columns key=key_id,window_start=win_start,window_end=win_end,cnt=events,total=amount,fire_watermark=wm \
  --live-late jobs/live/demo/late --live-keeps-updates --max-out-of-orderness 500ms,1s --idle-timeout 5s,30s
