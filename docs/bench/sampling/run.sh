#!/usr/bin/env bash
# The sampled-tree benchmark of docs/SAMPLING.md: the first 8 HumanEval prompts, 64 sampled tokens
# each (seed 1, top-p 1), T = 0.7 and 1, 3 repetitions; every drafter runs on each prompt in turn
# (alternated), so plain's tokens/s beside each ratio is from the same minutes.
# Usage: bash docs/bench/sampling/run.sh OUT_DIR   (from the repository root, after a release build)
set -euo pipefail
out=${1:?usage: run.sh OUT_DIR}
mkdir -p "$out"
zcat ../shared/data/prompts/HumanEval.jsonl.gz | head -8 |
  python3 -c 'import sys, json; [print(json.dumps({"prompt": json.loads(l)["prompt"]})) for l in sys.stdin]' \
  >"$out/he8.jsonl"
bench() {
  build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --prompts "$out/he8.jsonl" \
    --temps 0.7,1 --max-new-tokens 64 --reps 3 --warmup 1 --seed 1 -t 2 "$@"
}
# Equal verified tokens (8): the deterministic chain and tree against the sampled chain and tree.
bench --drafters plain,chain:6,dynamic:8:6:2:cal,sampled:8:6:1,sampled:8:6:2,dynamic:auto:8:1:cal \
  --json "$out/run1.json" --csv "$out/run1.csv" | tee "$out/run1.txt"
# A budget the chain cannot fill in 7 levels: 16 tokens as a chain of 15 or a 7-level tree.
bench --drafters plain,sampled:8:6:1,sampled:16:14:1,sampled:16:6:3 \
  --json "$out/run2.json" --csv "$out/run2.csv" | tee "$out/run2.txt"
python3 "$(dirname "$0")/ranges.py" "$out/run1.json"
python3 "$(dirname "$0")/ranges.py" "$out/run2.json"
