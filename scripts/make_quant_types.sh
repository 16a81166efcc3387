#!/usr/bin/env bash
# Files of the bundled code model in the GGUF types of issue 42 (Q4_1, Q5_0, Q5_1, IQ4_NL, Q5_K,
# Q3_K, Q2_K, IQ4_XS), made by llama.cpp's llama-quantize from llama.cpp's own bf16 conversion
# (../shared/data/gguf/code-lm-bf16.gguf), for the parity and equality checks
# (docs/QUANTIZATION.md):
#   OUTDIR/code-lm-mixed.gguf     every type in one file, one type per kind of matrix: attn_q Q5_0,
#                                 attn_k Q5_1, attn_v IQ4_NL, attn_output Q5_K, ffn_gate Q3_K,
#                                 ffn_up Q2_K, ffn_down IQ4_XS, the (tied) embedding Q4_1. One
#                                 quantization (a few seconds) exercises every decoder and kernel
#                                 in a real forward: what the tests use.
#   OUTDIR/code-lm-TYPE.gguf      with --pure: every matrix in TYPE (llama-quantize --pure), one
#                                 file per type; IQ4_NL and IQ4_XS take about 30 s each to make.
# Exits 77 (skipped) with a message when llama-quantize or the bf16 file is absent. Existing files
# are kept. The files are 9-19 MB each: put them outside the repository.
#
# Usage: scripts/make_quant_types.sh OUTDIR [--pure]
#   SHARED    the shared folder (default ../shared)
#   LLAMA_BIN the folder of llama-quantize (default $SHARED/tools/llama.cpp/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 OUTDIR [--pure]" >&2; exit 2; }
out=$1
pure=${2:-}
[ -z "$pure" ] || [ "$pure" = --pure ] || { echo "usage: $0 OUTDIR [--pure]" >&2; exit 2; }
shared=${SHARED:-../shared}
llama_bin=${LLAMA_BIN:-$shared/tools/llama.cpp/bin}
src=$shared/data/gguf/code-lm-bf16.gguf
quantize=$llama_bin/llama-quantize
if [ ! -x "$quantize" ] || [ ! -f "$src" ]; then
  echo "skipped: $quantize or $src is absent" >&2
  exit 77
fi
mkdir -p "$out"
export LD_LIBRARY_PATH="$llama_bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Writes $1 in llama-quantize type $2 with the flags that follow, through a temporary name (a run
# that fails or is killed leaves no file a later run would take as complete).
make_typed() {
  local dst=$1 type=$2
  shift 2
  [ -f "$dst" ] && return 0
  echo "writing $dst"
  if ! "$quantize" "$@" "$src" "$dst.tmp.$$" "$type" >"$dst.log.$$" 2>&1; then
    tail -5 "$dst.log.$$" >&2
    rm -f "$dst.tmp.$$" "$dst.log.$$"
    return 1
  fi
  rm -f "$dst.log.$$"
  mv -f "$dst.tmp.$$" "$dst"
}

make_typed "$out/code-lm-mixed.gguf" Q4_1 \
  --tensor-type attn_q=q5_0 --tensor-type attn_k=q5_1 --tensor-type attn_v=iq4_nl \
  --tensor-type attn_output=q5_k --tensor-type ffn_gate=q3_k --tensor-type ffn_up=q2_k \
  --tensor-type ffn_down=iq4_xs --token-embedding-type q4_1

if [ "$pure" = --pure ]; then
  # Q5_K_S / Q3_K_S with --pure: every matrix Q5_K / Q3_K.
  for t in Q4_1 Q5_0 Q5_1 IQ4_NL Q5_K_S Q3_K_S Q2_K IQ4_XS; do
    make_typed "$out/code-lm-$(echo "${t%_S}" | tr 'A-Z' 'a-z').gguf" "$t" --pure
  done
fi
