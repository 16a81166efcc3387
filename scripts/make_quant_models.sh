#!/usr/bin/env bash
# The 1.1B-shape quantized models of issue 41's verify-cost measurements: random weights of the
# llama-1b preset (hidden 2048, 22 layers, intermediate 5632, vocabulary 32000), written as
#   OUTDIR/llama-1b-q8_0.gguf    by `eagle2 make-random --dtype q8_0` (the bundled model's
#                                SentencePiece vocabulary padded to 32000, which llama.cpp needs
#                                to load the file: an f16 folder from make-random has none, so
#                                `eagle2 quantize` of it cannot write a GGUF file);
#   OUTDIR/llama-1b-q4_k_m.gguf  by llama.cpp's llama-quantize (Q4_K_M, from the Q8_0 file, hence
#                                --allow-requantize), skipped with a message where it is absent.
# The files are about 1.2 GB and 0.7 GB: put them outside the repository (e.g. /tmp/q41).
# Measure with, for example:
#   build/bin/eagle2 cost-curve -m OUTDIR/llama-1b-q4_k_m.gguf -t 2 --ks 1,2,4,8,16,64
#
# Usage: scripts/make_quant_models.sh OUTDIR
#   SEED      make-random's seed (default 1)
#   LLAMA_BIN the folder of llama-quantize (default ../shared/tools/llama.cpp/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
seed=${SEED:-1}
llama_bin=${LLAMA_BIN:-../shared/tools/llama.cpp/bin}
bin=build/bin/eagle2
[ -x "$bin" ] || bash scripts/build.sh
mkdir -p "$out"

q8=$out/llama-1b-q8_0.gguf
if [ ! -f "$q8" ]; then
  echo "writing $q8 (random weights, llama-1b preset)"
  "$bin" make-random --preset llama-1b --dtype q8_0 --seed "$seed" -o "$q8"
fi

q4km=$out/llama-1b-q4_k_m.gguf
if [ -f "$q4km" ]; then
  :
elif [ -x "$llama_bin/llama-quantize" ]; then
  echo "writing $q4km (llama.cpp's llama-quantize)"
  LD_LIBRARY_PATH="$llama_bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$llama_bin/llama-quantize" --allow-requantize "$q8" "$q4km" Q4_K_M
else
  echo "skipped $q4km: no llama-quantize in $llama_bin (set LLAMA_BIN)"
fi
ls -l "$out"
