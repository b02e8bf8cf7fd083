#!/bin/bash
# one interleaved round at 1M: old (40d1045) then new (this worktree); $1 = round tag
cd /work/wt/t46g
tag=$1; cfg=/work/main/bench/out/job-bursty-1m.yaml
for side in old new; do
  if [ $side = old ]; then pp=/tmp/t46g/old/src; rs=/tmp/t46g/old-report_steps.py; else pp=$PWD/src; rs=bench/report_steps.py; fi
  echo "== $side $tag start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) commit $(git rev-parse --short HEAD) dirty $(git status --short src | wc -l)"
  PYTHONPATH=$pp nice -n 15 .venv/bin/python $rs --config $cfg --variants 4 --skip compare --skip "GX suites" --skip why-report --out-dir /tmp/t46g/1m-$side-$tag > /tmp/t46g/1m-$side-$tag.out 2> /tmp/t46g/1m-$side-$tag.err
  echo "rc=$? end $(date +%T)"; grep "^bench:" /tmp/t46g/1m-$side-$tag.err; tail -4 /tmp/t46g/1m-$side-$tag.out
done
.venv/bin/python /tmp/t46g/same.py /tmp/t46g/1m-old-$tag /tmp/t46g/1m-new-$tag
