#!/bin/bash
# kbench A/B of session 33's kernels: "base" = kbench built from main before them (925d779),
# "s33" = from the branch (kbench_build.sh for both), 512 x 2048, 1 thread, alternated, 3 runs:
# Q6_K on the AVX2 path (quant_kcols8_avx2.cpp from 4 rows), Q5_K on both paths (the
# columns-in-lanes kernels from 1 row), Q4_1/Q5_0/Q5_1/IQ4_NL on the AVX-512 path
# (quant_codes_cols16_avx512.cpp from 1 row) and Q4_1/Q5_0/Q5_1 on the AVX2 path
# (quant_codes_cols8_avx2.cpp from 1 row). Usage: kbench_multirow.sh DIR (holding kbench-base and
# kbench-multirow); writes to stdout (kbench-multirow.txt).
cd "${1:-.}"
one() {  # TYPE PATH
  for M in 1 2 4 8 16; do
    for b in base s33; do
      printf "%-5s %-6s " $b $2; ./kbench-$b $1 $M 512 2048 10 $2 | grep -o "Q.*us/row\|IQ.*us/row" | sed 's/(best of 5, thread CPU)//'
    done
  done
}
for run in 1 2 3; do
  echo "# run $run $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  one 6 avx2
  one Q5_K avx2
  one Q5_K avx512
  for t in Q4_1 Q5_0 Q5_1 IQ4_NL; do one $t avx512; done
  for t in Q4_1 Q5_0 Q5_1; do one $t avx2; done
done
