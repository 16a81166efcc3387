#!/usr/bin/env bash
# Suffix decoding against prompt lookup, the bundled EAGLE-2 drafter and plain decoding
# (docs/SPECULATIVE.md "Suffix decoding"): `eagle2 bench` at T = 0, 128 new tokens, on the
# multi-turn code-edit prompts (bench/prompts/code_edits.jsonl, scripts/make_edit_prompts.py) and
# on the first 12 HumanEval prompts, REPS separate runs (drafters interleaved per prompt within a
# run), then the ranges over the runs (scripts/bench_ranges.py).
# Usage: scripts/bench_suffix.sh OUT_DIR [REPS]
#   BIN       eagle2 binary (default build/bin/eagle2)
#   THREADS   threads (default 2)
#   DRAFTERS  comma-separated specs (default plain,lookup,suffix,dynamic:auto:8:1:cal)
set -euo pipefail
out=${1:?usage: scripts/bench_suffix.sh OUT_DIR [REPS]}
reps=${2:-3}
bin=${BIN:-build/bin/eagle2}
threads=${THREADS:-2}
drafters=${DRAFTERS:-plain,lookup,suffix,dynamic:auto:8:1:cal}
root=$(cd "$(dirname "$0")/.." && pwd)
humaneval=$root/../shared/data/prompts/HumanEval.jsonl.gz
edits=$root/bench/prompts/code_edits.jsonl
for f in "$bin" "$humaneval" "$edits"; do
  [[ -e $f ]] || { echo "error: $f not found" >&2; exit 1; }
done
mkdir -p "$out"
common=(-m "$root/models/code-lm" --draft "$root/models/code-lm-eagle" --max-new-tokens 128
        --temps 0 --reps 1 -t "$threads" --drafters "$drafters")
for r in $(seq 1 "$reps"); do
  "$bin" bench "${common[@]}" --prompts "$edits" --csv "$out/edits.run$r.csv" \
    > "$out/edits.run$r.txt" 2>/dev/null
  "$bin" bench "${common[@]}" --prompts "$humaneval" --limit 12 --csv "$out/humaneval.run$r.csv" \
    > "$out/humaneval.run$r.txt" 2>/dev/null
  echo "run $r of $reps done"
done
python3 "$root/scripts/bench_ranges.py" "$out"/edits.run*.csv "$out"/humaneval.run*.csv \
  > "$out/ranges.md"
cat "$out/ranges.md"
