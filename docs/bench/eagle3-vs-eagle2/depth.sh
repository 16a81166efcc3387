#!/usr/bin/env bash
# Where the accepted paths stop along chain:6 (7 drafted tokens), T = 0, one interleaved bench:
# the EAGLE-2 head, the bundled EAGLE-3 head and the previous bundled one (3 unrolled steps,
# extracted from git: OLD3, default /tmp/s20/old3, from `git show 6013122:models/code-lm-eagle3/...`).
# Writes OUT/depth.{txt,csv,json} and OUT/depth.by-depth.txt (scripts/accept_by_depth.py).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-docs/bench/eagle3-vs-eagle2}
old3=${OLD3:-/tmp/s20/old3}
corpus=${CODE_CORPUS:-/tmp/eagle2-code-corpus}
build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
  --prompts "$corpus/heldout_prompts.jsonl" --limit 40 --max-new-tokens 128 \
  --drafters "plain,chain:6,chain:6@models/code-lm-eagle3,chain:6@$old3" --temps 0 -t 2 \
  --csv "$out/depth.csv" --json "$out/depth.json" > "$out/depth.txt"
python3 scripts/accept_by_depth.py "$out/depth.json" > "$out/depth.by-depth.txt"
cat "$out/depth.by-depth.txt"
