#!/bin/bash
# after: this worktree's commit, calibration alone at 10M
cd /work/wt/t46g
echo "== new start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) commit $(git rev-parse --short HEAD) dirty $(git status --short src | wc -l)"
nice -n 15 .venv/bin/python bench/report_steps.py --config /work/main/bench/out/job-bursty-10m.yaml --variants 4 --skip compare --skip "GX suites" --skip why-report --out-dir /tmp/t46g/steps-new$1
echo "rc=$? end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
