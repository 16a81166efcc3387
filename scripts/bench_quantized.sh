#!/usr/bin/env bash
# EAGLE-2 on quantized targets (issue 13, "Performance"): the bundled code model as llama.cpp
# converted and quantized it (SHARED/data/gguf/code-lm-{bf16,q8_0,q4_0,q4_k_m}.gguf), each file
#   1. its verify cost curve: `eagle2 cost-curve`, k = 1..64 on a 256-token context;
#   2. `eagle2 bench` at T = 0 on the first PROMPTS HumanEval prompts, 128 new tokens, the code
#      head drafting from its 1024 most frequent tokens (as the demo does): plain decoding, the
#      auto budget (the demo's default drafter), chains, two fixed dynamic trees and lookup.
# A quantized target is cheaper to read, so verifying k tokens costs relatively more against one:
# the cost curve says how much, the bench what that does to the speedup, and the auto budget's
# mean tree size (tree_tokens) what it chose per file.
#
# Timings on a shared 2-core machine move by about +-10 % between runs, so everything runs RUNS
# times, the files interleaved within each run (slow drift of the machine hits all four alike).
# Writes OUT/<file>/cost.runN.{csv,txt} and bench.runN.{csv,txt} (bench.json of run 1), then
# OUT/ranges.md (every figure as the range over the runs, scripts/quantized_ranges.py) and
# OUT/cost_curve.svg and OUT/speedup.svg (scripts/quantized_charts.py).
#
# Usage: scripts/bench_quantized.sh [OUT_DIR (default docs/bench/quantized)]
#   RUNS     how many times to run everything (default 3)
#   PROMPTS  HumanEval prompts per bench (default 12; 2 is a quick functional check)
#   THREADS  threads for both commands (default 2)
#   REPS     cost-curve repetitions per k, median (default 5)
#   SHARED   the shared data folder's parent (default ../shared)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/bench/quantized}
runs=${RUNS:-3}
prompts=${PROMPTS:-12}
threads=${THREADS:-2}
reps=${REPS:-5}
shared=${SHARED:-../shared}
bin=build/bin/eagle2
gguf=$shared/data/gguf
humaneval=$shared/data/prompts/HumanEval.jsonl.gz
files=(bf16 q8_0 q4_0 q4_k_m)
drafters="plain,dynamic:auto:8:1:cal,chain:2,chain:6,chain:14,dynamic:8:6:2:cal,dynamic:16:6:2:cal,lookup"

[ -x "$bin" ] || bash scripts/build.sh
for q in "${files[@]}"; do
  [ -f "$gguf/code-lm-$q.gguf" ] || { echo "error: $gguf/code-lm-$q.gguf not found" >&2; exit 1; }
done
[ -f "$humaneval" ] || { echo "error: $humaneval not found" >&2; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# Runs a command with stderr (progress, errors) to $err; on failure shows the end of it and stops.
checked() {
  "$@" 2>"$err" || { tr '\r' '\n' <"$err" | tail -n 5 >&2; echo "error: failed: $*" >&2; exit 1; }
}

start_all=$SECONDS
for r in $(seq 1 "$runs"); do
  for q in "${files[@]}"; do
    model=$gguf/code-lm-$q.gguf
    dir=$out/$q
    mkdir -p "$dir"
    start=$SECONDS
    checked "$bin" cost-curve -m "$model" --ks 1,2,4,8,16,32,64 --context 256 --reps "$reps" \
      -t "$threads" --csv "$dir/cost.run$r.csv" >"$dir/cost.run$r.txt"
    extra=()
    [ "$r" = 1 ] && extra=(--json "$dir/bench.json")
    # The greedy check is on: a quantized target's speculative output must equal its plain one
    # (bench exits non-zero otherwise, and so does this script).
    checked "$bin" bench -m "$model" --draft models/code-lm-eagle --draft-vocab 1024 --ctx 1024 \
      --prompts "$humaneval" --limit "$prompts" --max-new-tokens 128 --temps 0 \
      --drafters "$drafters" -t "$threads" --csv "$dir/bench.run$r.csv" "${extra[@]}" \
      >"$dir/bench.run$r.txt"
    echo "($q, run $r of $runs: $((SECONDS - start)) s)"
  done
done
echo "(all runs: $((SECONDS - start_all)) s)"

python3 scripts/quantized_ranges.py "$out" "${files[@]}" | tee "$out/ranges.md"
python3 scripts/quantized_charts.py "$out" "${files[@]}"
