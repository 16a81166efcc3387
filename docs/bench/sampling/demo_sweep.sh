#!/usr/bin/env bash
# The T = 0.7 sweeps of docs/SAMPLING.md ("The demo's sampled run" and the sampled:auto table):
# same-seed drafters against plain and sampled trees, 64 tokens, seed 1, 3 repetitions, every
# drafter run on each prompt in turn. demo_prompts.jsonl holds `eagle2 demo`'s four built-in
# prompts; he8.jsonl is made from the first 8 HumanEval prompts as run.sh makes it.
# Usage: bash docs/bench/sampling/demo_sweep.sh OUT_DIR   (repository root, after a release build)
set -euo pipefail
out=${1:?usage: demo_sweep.sh OUT_DIR}
here=$(dirname "$0")
mkdir -p "$out"
zcat ../shared/data/prompts/HumanEval.jsonl.gz | head -8 |
  python3 -c 'import sys, json; [print(json.dumps({"prompt": json.loads(l)["prompt"]})) for l in sys.stdin]' \
  >"$out/he8.jsonl"
cp "$here/demo_prompts.jsonl" "$out/demo4.jsonl"
bench() {
  build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --max-new-tokens 64 \
    --reps 3 --warmup 1 --seed 1 -t 2 "$@"
}
# Sweep 1 and 2: the demo's draft vocabulary (1024), T = 0.7.
bench --draft-vocab 1024 --prompts "$out/demo4.jsonl" --temps 0.7 --json "$out/sweep1.json" \
  --drafters plain,dynamic:auto:8:1:cal,dynamic:auto:8:2:cal,chain:2,chain:3,chain:4,dynamic:6:4:2:cal,lookup,suffix,sampled:8:6:1
bench --draft-vocab 1024 --prompts "$out/demo4.jsonl" "$out/he8.jsonl" --temps 0.7 \
  --json "$out/sweep2.json" \
  --drafters plain,dynamic:auto:8:1:cal,dynamic:6:4:2:cal,dynamic:auto:6:2:cal,chain:1,sampled:8:6:1
# sampled:auto against the fixed trees, full vocabulary, T = 0.7 and 1.
bench --prompts "$out/he8.jsonl" --temps 0.7,1 --json "$out/auto.json" \
  --drafters plain,dynamic:auto:8:1:cal,sampled:8:6:1,sampled:auto,sampled:auto:8:1
# Per-repetition ranges per prompt set: split sweep2.json by its "prompt_set" field first.
for f in sweep1 sweep2 auto; do python3 "$here/ranges.py" "$out/$f.json"; done
