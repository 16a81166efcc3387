#!/bin/bash
# A/B of the verify cost curve, alternated: for each run, for each file, `eagle2 cost-curve` with
# binary A then binary B, then llama.cpp's llama-bench pp1..pp16 on the same file.
# Usage: ab.sh OUT RUNS BIN_A BIN_B   (MODELS: the folder of scripts/make_quant_models.sh, default
# /tmp/q41; FILES: which llama-1b-FILE.gguf, default "q4_k_m q8_0"; LLAMA_BIN: llama.cpp's bin
# folder, default /work/shared/tools/llama.cpp/bin; NO_LLAMA=1 skips llama-bench; THREADS default 2;
# KS, the k list, default 1,2,4,8,16,64)
# Writes OUT/cost-FILE-BIN.runN.txt and OUT/llama-bench-FILE.runN.txt.
out=$1; runs=$2; A=$3; B=$4
models=${MODELS:-/tmp/q41}
L=${LLAMA_BIN:-/work/shared/tools/llama.cpp/bin}
mkdir -p "$out"
for r in $(seq 1 "$runs"); do
  for f in ${FILES:-q4_k_m q8_0}; do
    for bin in "$A" "$B"; do
      "$bin" cost-curve -m "$models/llama-1b-$f.gguf" -t "${THREADS:-2}" --ks "${KS:-1,2,4,8,16,64}" \
        > "$out/cost-$f-$(basename "$bin").run$r.txt" 2>&1
    done
    [ -n "${NO_LLAMA:-}" ] && continue
    LD_LIBRARY_PATH=$L "$L/llama-bench" -m "$models/llama-1b-$f.gguf" -t 2 -p 1,2,4,8,16 -n 0 \
      > "$out/llama-bench-$f.run$r.txt" 2>&1
  done
done
