#!/usr/bin/env bash
# EAGLE-2 head against EAGLE-3 head on the same trees (issue 15): the bundled code model with its
# EAGLE head (models/code-lm-eagle, drafting from its 1024 most frequent tokens, as the demo) and
# its EAGLE-3 head (models/code-lm-eagle3, its own 1024-token draft vocabulary), each drafting
#   dynamic:8:6:2          the published ranking, uncalibrated, 8 tokens
#   dynamic:8:6:2:cal      the same tree ranked by calibrated confidences
#   dynamic:auto:8:1:cal   the tree size chosen each cycle from the verify cost (the demo's)
#   dynamic:60:5:10        the paper's tree
#   chain:6                no tree: a chain of 7 drafted tokens (the EAGLE-2 head's fastest
#                          setting on some machines, so "its best setting" must include it)
#   chain:3, chain:5       shorter chains, each a head's fastest setting on the AVX2 machine at
#                          some point (chain:5 for the EAGLE-2 head before the one-column tiles,
#                          chain:3 for both after them made 5-token verifies cheap)
# on the code corpus's held-out windows at T = 0 and T = 1, 128 new tokens per prompt, every
# drafter and plain decoding interleaved in ONE `eagle2 bench` per run (the EAGLE-3 columns name
# their head with "@HEAD_DIR"), RUNS runs.
#
# Writes OUT/bench.runN.csv and bench.runN.txt (the printed table) for every run and OUT/table.md
# (scripts/eagle3_table.py: every figure as its range over the runs, plain decoding's tokens/s
# above each table, the EAGLE-3/EAGLE-2 tau ratio per tree, each head's fastest setting per run).
# Prints the table.
#
# How long: 15 columns x LIMIT prompts x 2 temperatures x 128 tokens, the 60-token trees at
# ~0.4x plain decoding's speed (0.15x at T = 1). From counts, about 2 minutes a run with the
# default 40 prompts on the Zen 4 machines (11 columns, before chain:3 and chain:5). Measured on
# a 2-core AVX2-only machine: about 8 minutes a run at T = 0 alone and 15 at T = 1 alone with 11
# columns (plain decoding at ~130-160 tokens/s), 9 minutes at T = 0 with 15 (plain ~250).
#
# Usage: scripts/eagle3_table.sh [OUT_DIR (default docs/bench/eagle3-vs-eagle2)]
#   RUNS         how many times to run the benchmark (default 3)
#   LIMIT        held-out prompts (default 40)
#   TEMPS        temperatures (default 0,1)
#   THREADS      bench threads (default 2)
#   HEAD2        the EAGLE head (default models/code-lm-eagle)
#   HEAD3        the EAGLE-3 head (default models/code-lm-eagle3)
#   CODE_CORPUS  where scripts/make_code_corpus.sh writes (or has written) the code corpus
#                (default /tmp/eagle2-code-corpus; built on first use, needs apt and python3)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/bench/eagle3-vs-eagle2}
runs=${RUNS:-3}
limit=${LIMIT:-40}
temps=${TEMPS:-0,1}
threads=${THREADS:-2}
head2=${HEAD2:-models/code-lm-eagle}
head3=${HEAD3:-models/code-lm-eagle3}
corpus=${CODE_CORPUS:-/tmp/eagle2-code-corpus}
bin=build/bin/eagle2

for n in "$runs" "$limit" "$threads"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$n' is not a positive whole number" >&2; exit 1; }
done
for h in "$head2" "$head3"; do
  [ -f "$h/config.json" ] || { echo "error: $h/config.json not found" >&2; exit 1; }
done
[ -x "$bin" ] || bash scripts/build.sh
[ -f "$corpus/heldout_prompts.jsonl" ] || bash scripts/make_code_corpus.sh "$corpus"
mkdir -p "$out"

trees=(dynamic:8:6:2 dynamic:8:6:2:cal dynamic:auto:8:1:cal dynamic:60:5:10 chain:3 chain:5 chain:6)
drafters=plain
for t in "${trees[@]}"; do drafters+=",$t,$t@$head3"; done

for run in $(seq 1 "$runs"); do
  echo "run $run of $runs" >&2
  "$bin" bench -m models/code-lm --draft "$head2" --draft-vocab 1024 \
    --prompts "$corpus/heldout_prompts.jsonl" --limit "$limit" --max-new-tokens 128 \
    --drafters "$drafters" --temps "$temps" -t "$threads" \
    --csv "$out/bench.run$run.csv" | tee "$out/bench.run$run.txt"
done
python3 scripts/eagle3_table.py --head3 "$head3" "$out"/bench.run*.csv > "$out/table.md"
cat "$out/table.md"
