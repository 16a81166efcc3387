#!/bin/bash
# `eagle2 cost-curve` A/B of session 33's kernels on one 1.1B-shape file, alternated per run:
# eagle2-main (main before them, 925d779) then eagle2-s33 (the branch), 2 threads, k = 1..16.
# Usage: cost_multirow.sh FILE RUNS   (run in the folder holding eagle2-main and eagle2-s33; FILE:
# q5_k_m, q5_0, ... for MODELS/llama-1b-FILE.gguf, MODELS default /tmp/q41; EAGLE2_KERNEL=avx2
# forces the AVX2 path in both). Writes to stdout (cost-multirow-FILE*.txt).
f=$1
for r in $(seq 1 "$2"); do
  for b in main s33; do
    echo "# $f $b run $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./eagle2-$b cost-curve -m "${MODELS:-/tmp/q41}/llama-1b-$f.gguf" -t 2 --ks 1,2,4,8,16 2>&1 | tail -12
  done
done
