#!/usr/bin/env bash
# End to end on the bundled model (issue 41, what a user sees): `eagle2 bench` at T = 0 and
# `eagle2 cost-curve` on the Q4_K_M and Q8_0 files, two binaries alternated within each run so
# that the machine's drift hits both alike. Bench flags as scripts/bench_quantized.sh uses them
# (the code head, its 1024 most frequent tokens, 128 new tokens, HumanEval), fewer prompts and
# drafters (plain, the demo default dynamic:auto:8:1:cal, chain:6, dynamic:8:6:2:cal).
# Usage: e2e.sh BASE_BIN NEW_BIN OUT_DIR   (RUNS default 3, PROMPTS default 12, THREADS default 2,
#   SHARED default ../shared, FILES default "q4_k_m q8_0" (code-lm-FILE.gguf), run from the
#   repository root)
set -euo pipefail
base=$1; new=$2; out=$3
runs=${RUNS:-3}; prompts=${PROMPTS:-12}; threads=${THREADS:-2}; shared=${SHARED:-../shared}
humaneval=$shared/data/prompts/HumanEval.jsonl.gz
drafters="plain,dynamic:auto:8:1:cal,chain:6,dynamic:8:6:2:cal"
mkdir -p "$out"
for r in $(seq 1 "$runs"); do
  for q in ${FILES:-q4_k_m q8_0}; do
    model=$shared/data/gguf/code-lm-$q.gguf
    for b in base new; do
      bin=$base; [ "$b" = new ] && bin=$new
      "$bin" cost-curve -m "$model" --ks 1,2,4,8,16,32,64 --context 256 --reps 5 -t "$threads" \
        >"$out/cost-$q-$b.run$r.txt" 2>/dev/null
      "$bin" bench -m "$model" --draft models/code-lm-eagle --draft-vocab 1024 --ctx 1024 \
        --prompts "$humaneval" --limit "$prompts" --max-new-tokens 128 --temps 0 \
        --drafters "$drafters" -t "$threads" --csv "$out/bench-$q-$b.run$r.csv" \
        >"$out/bench-$q-$b.run$r.txt" 2>/dev/null
      echo "run $r $q $b done ($(date -u +%H:%M:%S))"
    done
  done
done
