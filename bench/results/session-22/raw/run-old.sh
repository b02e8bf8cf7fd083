#!/bin/bash
# baseline: main 40d1045's src, calibration alone at 10M
cd /work/wt/t46g
echo "== old start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) code 40d1045" 
PYTHONPATH=/tmp/t46g/old/src nice -n 15 .venv/bin/python /tmp/t46g/old-report_steps.py --config /work/main/bench/out/job-bursty-10m.yaml --variants 4 --skip compare --skip "GX suites" --skip why-report --out-dir /tmp/t46g/steps-old
echo "rc=$? end $(date +%T)"
