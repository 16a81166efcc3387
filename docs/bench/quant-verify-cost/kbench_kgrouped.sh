#!/bin/bash
# kbench A/B of commit 3f6ab2f: main (row layout, codes 5/6) against the branch (kRowGroups16,
# codes 9/10), alternated, 3 runs. Usage: kbench_kgrouped.sh DIR, where DIR holds kbench-base and
# kbench-branch (kbench_build.sh on the two trees); writes to stdout (kbench-kgrouped.txt).
cd "${1:-.}"
for run in 1 2 3; do
  echo "# run $run $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for shape in "512 2048 10" "5632 2048 3" "2048 5632 3"; do
    for M in 1 2 4 8 16; do
      for b in "base 5" "branch 9" "base 6" "branch 10"; do
        set -- $b
        printf "%-6s " $1; ./kbench-$1 $2 $M $shape | grep -o "Q.*us/row" | sed 's/(best of 5, thread CPU)//'
      done
    done
  done
  for M in 1 2 4 8; do
    for b in "base 6" "branch 10"; do set -- $b; printf "%-6s " $1; ./kbench-$1 $2 $M 32000 2048 1 | grep -o "Q.*us/row" | sed 's/(best of 5, thread CPU)//'; done
  done
done
