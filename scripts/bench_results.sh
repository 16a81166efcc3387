#!/usr/bin/env bash
# docs/RESULTS.md's "Older: the full drafter benchmark" section, reproduced: `eagle2 bench` on
#   1. the bundled code model and head: 12 held-out code windows and the first 12 HumanEval prompts;
#   2. stories260K and its EAGLE head (../shared/data): openings of the last 40 held-out stories;
# greedy (T = 0) and temperature 1, every drafter interleaved per prompt, and a tree-budget sweep
# (chain, EAGLE-1's static tree pruned to the same sizes, EAGLE-2's dynamic tree, the auto budget).
# Writes OUT/code and OUT/stories: bench.txt (the printed table), bench.json, bench.csv and the SVG
# charts. About 10 minutes a run on 2 cores. The code model's EAGLE drafters all draft from the
# head's 1024 most frequent tokens (--draft-vocab 1024, as the demo does).
#
# Timings on a shared 2-core machine move by about +-10 % between runs, so the whole benchmark runs
# RUNS times (default 3): run N writes bench.runN.txt and bench.runN.csv, run 1 also the charts and
# bench.json, and ranges.md gives every figure as the range over the runs (scripts/bench_ranges.py),
# the plain tokens/s beside each speedup.
#
# Usage: scripts/bench_results.sh [OUT_DIR (default docs/bench)]
#   RUNS         how many times to run the whole benchmark (default 3)
#   CODE_CORPUS  where scripts/make_code_corpus.sh writes (or has written) the code corpus
#                (default /tmp/eagle2-code-corpus; built on first use, needs apt and python3)
#   SHARED       the shared data folder's parent (default ../shared); stories are skipped without it
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/bench}
corpus=${CODE_CORPUS:-/tmp/eagle2-code-corpus}
shared=${SHARED:-../shared}
runs=${RUNS:-3}
bin=build/bin/eagle2
[ -x "$bin" ] || bash scripts/build.sh
[ -f "$corpus/heldout_prompts.jsonl" ] || bash scripts/make_code_corpus.sh "$corpus"
mkdir -p "$out/code" "$out/stories"

# Sizes 4, 8 and 16 for each family (chain:D verifies D + 2 tokens): the chain, EAGLE-1's static
# tree pruned to the size, EAGLE-2's dynamic tree as the paper ranks it and with calibrated
# confidences (:cal); then the full static tree, the paper's dynamic tree and the auto budgets.
sweep="chain:2,chain:6,chain:14,static:4,static:8,static:16,static"
run() {  # name, then bench arguments; the run number is $r
  local name=$1
  shift
  local start=$SECONDS
  local extra=()
  [ "$r" = 1 ] && extra=(--json "$out/$name/bench.json" --svg-dir "$out/$name")
  "$bin" bench "$@" --temps 0,1 -t 2 --csv "$out/$name/bench.run$r.csv" "${extra[@]}" \
    2>/dev/null | tee "$out/$name/bench.run$r.txt"
  echo "($name, run $r of $runs: $((SECONDS - start)) s)"
}

for r in $(seq 1 "$runs"); do
  if [ -f "$shared/data/prompts/HumanEval.jsonl.gz" ]; then
    run code -m models/code-lm --draft models/code-lm-eagle --ctx 1024 --max-new-tokens 128 \
      --prompts "$corpus/heldout_prompts.jsonl" "$shared/data/prompts/HumanEval.jsonl.gz" --limit 12 \
      --draft-vocab 1024 \
      --drafters "plain,lookup,$sweep,dynamic:4:6:2,dynamic:8:6:2,dynamic:16:6:2,dynamic:4:6:2:cal,dynamic:8:6:2:cal,dynamic:16:6:2:cal,dynamic:60:5:10,dynamic:auto:8:1:cal,dynamic:auto:8:2:cal"
  else
    echo "skipped the code model: $shared/data/prompts/HumanEval.jsonl.gz not found" >&2
  fi

  models=$shared/data/models
  if [ -d "$models/stories260K-hf" ] && [ -d "$models/stories260K-eagle-head" ]; then
    run stories -m "$models/stories260K-hf" --draft "$models/stories260K-eagle-head" --max-new-tokens 128 \
      --prompts "$shared/data/corpora/tinystories_valid_head.txt" --from-end --limit 40 --opening-words 16 \
      --drafters "plain,lookup,$sweep,dynamic:4:3:4,dynamic:8:4:4,dynamic:16:4:4,dynamic:4:3:4:cal,dynamic:8:4:4:cal,dynamic:16:4:4:cal,dynamic:60:5:10,dynamic:auto:4:4:cal"
  else
    echo "skipped stories260K: $models/stories260K-hf or its head not found" >&2
  fi
done

for name in code stories; do
  ls "$out/$name"/bench.run*.csv >/dev/null 2>&1 || continue
  python3 scripts/bench_ranges.py "$out/$name"/bench.run*.csv | tee "$out/$name/ranges.md"
done
