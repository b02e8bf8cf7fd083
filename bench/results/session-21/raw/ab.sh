# 10M bursty: one replay (this branch), then `replay compare` of it against itself as live (--live-keeps-updates),
# old tree (main 3865f8a) and new (this branch) interleaved, each its own process, wall + CPU by /usr/bin/time.
set -e
cd /work/wt/t46f
R=.venv/bin/replay
T='/work/wt/t46f/.venv/bin/python /tmp/t46f/ab/cputree.py'
uptime
if [ ! -d /tmp/t46f/ab/replay/windows ]; then nice -n 15 $T $R run --config /tmp/t46f/ab/job.yaml; fi
for round in ${ROUNDS:-1 2}; do
  for v in old new; do
    if [ $v = old ]; then export PYTHONPATH=/work/wt/t46f-old/src; else unset PYTHONPATH; fi
    echo "== round $round $v $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    nice -n 15 $T $R compare --config /tmp/t46f/ab/job.yaml --live /tmp/t46f/ab/replay/windows --live-keeps-updates \
      --out /tmp/t46f/ab/cmp-$v-$round --report-only
  done
done
echo ALLDONE
