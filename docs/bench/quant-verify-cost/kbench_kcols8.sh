#!/bin/bash
# kbench A/B of the AVX2 Q4_K columns-in-lanes kernel (commit 1e44cde): "percol" = the tree with
# kKCols8MinRowsQ4K set out of reach (the per-column kernel at every M, as before), "cols8" = the
# tree with it at 1 (the new kernel at every M), both built by kbench_build.sh; the AVX2 path
# (kbench's sixth argument), alternated, 3 runs. Usage: kbench_kcols8.sh DIR (holding
# kbench-percol and kbench-cols8); writes to stdout (kbench-kcols8-avx2.txt).
cd "${1:-.}"
for run in 1 2 3; do
  echo "# run $run $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for M in 1 2 4 8 16; do
    for b in percol cols8; do
      printf "%-6s " $b; ./kbench-$b 5 $M 512 2048 10 avx2 | grep -o "Q.*us/row" | sed 's/(best of 5, thread CPU)//'
    done
  done
  for M in 1 2 8; do
    for b in percol cols8; do
      printf "%-6s " $b; ./kbench-$b 5 $M 2048 5632 3 avx2 | grep -o "Q.*us/row" | sed 's/(best of 5, thread CPU)//'
    done
  done
done
