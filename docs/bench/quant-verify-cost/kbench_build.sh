#!/bin/bash
# Builds kbench.cpp against the quantized kernels of the source tree SRCROOT (a checkout of any
# commit, e.g. `git archive COMMIT src include | tar -x -C DIR`), with the ISA flags CMake uses,
# and the core library of an existing build (BUILD, default build).
# Usage: kbench_build.sh SRCROOT OUT_BINARY; then OUT_BINARY DTYPE M N K ITERS [avx2]
#   (DTYPE: 5 Q4_K, 6 Q6_K, 3 Q8_0, 4 Q4_0 in the row layout; 7 Q8_0, 8 Q4_0, 9 Q4_K, 10 Q6_K in
#   kRowGroups16 as the loader leaves them; or a type name, Q5_K, Q4_1, ..., in the row layout).
set -e
src=$1; out=$2; build=${BUILD:-build}
here=$(dirname "$0")
A512="-mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 -mavx512vnni -mavx2 -mfma -mf16c"
tmp=$(mktemp -d)
objs=()
for f in "$src"/src/kernels/quant_*.cpp "$src"/src/kernels/cpu.cpp; do
  fl=""
  case $f in *_avx512.cpp) fl=$A512 ;; *_avx2.cpp) fl="-mavx2 -mfma -mf16c" ;; esac
  o=$tmp/$(basename "$f" .cpp).o
  g++ -O3 -std=c++20 -ffp-contract=off -I"$src/src" -I"$src/include" $fl -c "$f" -o "$o"
  objs+=("$o")
done
g++ -O3 -std=c++20 -I"$src/src" -I"$src/include" "$here/kbench.cpp" "${objs[@]}" \
  "$build/src/libeagle2_core.a" -lpthread -o "$out"
rm -rf "$tmp"
