set -e
cd /work/wt/t46f
R=.venv/bin/replay
nice -n 15 $R sample --out /tmp/t46f/demo/sample --rows 20000 --splits 4 --seed 7
nice -n 15 $R run --config /tmp/t46f/demo/a.yaml
nice -n 15 $R run --config /tmp/t46f/demo/b.yaml
for v in old new; do
  if [ $v = old ]; then export PYTHONPATH=/work/wt/t46f-old/src; else unset PYTHONPATH; fi
  nice -n 15 .venv/bin/python -c "import event_replay,sys;print(event_replay.__file__)"
  nice -n 15 $R compare --config /tmp/t46f/demo/a.yaml --live /tmp/t46f/demo/live/windows --live-late /tmp/t46f/demo/live/late_events --live-keeps-updates --out /tmp/t46f/demo/cmp-$v --report-only
  nice -n 15 $R compare --config /tmp/t46f/demo/a.yaml --live /tmp/t46f/demo/live/windows --out /tmp/t46f/demo/cmp-last-$v --report-only
done
echo ALLDONE
