#!/usr/bin/env bash
# The EAGLE-2 paper's comparison on this engine (issue 14): speedup and tau of SpS, PLD, Lookahead,
# Medusa, Hydra, EAGLE-1, EAGLE-2 and its ablation (w/o value, w/o reranking), each drafter a
# method row (scripts/paper_methods.py maps methods to drafter specs), on the bundled code model:
#   in-domain      the code corpus's held-out windows and HumanEval, the first LIMIT of each;
#   out-of-domain  the paper's other sets in SHARED/data/prompts (MT-bench, GSM8K, Alpaca, CNN/DM,
#                  Natural Questions), the first OOD_LIMIT of each;
# at T = 0 and T = 1, 128 new tokens per prompt, every set and drafter interleaved in ONE
# `eagle2 bench` per run (so slow drift of the machine hits all alike). The EAGLE drafters use
# the head models/code-lm-eagle drafting from its 1024 most frequent tokens (--draft-vocab 1024,
# as the demo; bench applies it to the EAGLE head only, not to SpS/Medusa/Hydra).
#
# A prompt over PROMPT_TOKENS tokens (the CNN/DM articles) is cut to its first PROMPT_TOKENS: the
# model has 1024 positions, which must also hold the 128 new tokens and the widest tree (121 rows
# for lookahead:15:5:15). scripts/paper_prompts.py writes the sets as bench reads them (the list
# in OUT/prompts.txt). A drafter whose folder is missing (say models/code-lm-hydra, not bundled)
# or that a 16-token check run rejects is left out with a note; its table row says
# "not run: WHY".
#
# How long (an estimate from counts, not a measurement): each drafter generates 64 prompts x 2
# temperatures x 128 tokens, plus 2 warm-up prompts, a run: ~17k tokens, about 20 s at plain
# decoding's ~830 tokens/s on this machine's 2 cores (docs/bench/code), 50 s for a drafter at
# 0.4x (dynamic:60:5:10 ran at 0.40-0.45x there; the other 60-token trees and lookahead:15:5:15's
# 121 rows may be as slow). With the 16 default drafters and plain decoding that is about 10
# minutes a run, about 30 minutes for the default 3 runs, plus under a minute of checks first.
#
# Writes OUT/bench.runN.csv and bench.runN.txt (the printed table) for every run, run 1 also
# bench.json and the bench's own charts of every set (in OUT/per_set/); OUT/methods.tsv (the
# method rows and what was left out), OUT/prompts.txt, OUT/table.md (scripts/paper_table.py: the
# paper-style table with every figure as its range over the runs and the plain tokens/s above
# each group, every set's figures, and the paper's published GPU figures beside them), and
# OUT/speedup.svg, tau.svg, speedup_t1.svg, tau_t1.svg (scripts/paper_charts.py). Prints the
# table.
#
# Usage: scripts/paper_table.sh [OUT_DIR (default docs/bench/paper)]
#   RUNS           how many times to run the benchmark (default 3)
#   LIMIT          prompts per in-domain set (default 12)
#   OOD_LIMIT      prompts per out-of-domain set (default 8)
#   DRAFTERS       method rows instead of the default list: METHOD=SPEC or SPEC entries separated
#                  by ';' or ',' (see scripts/paper_methods.py), e.g. "PLD=lookup;EAGLE-2=dynamic"
#   TEMPS          temperatures (default 0,1)
#   THREADS        bench threads (default 2)
#   PROMPT_TOKENS  longest prompt in tokens, BOS included (default 640)
#   HEAD           the EAGLE head (default models/code-lm-eagle)
#   CODE_CORPUS    where scripts/make_code_corpus.sh writes (or has written) the code corpus
#                  (default /tmp/eagle2-code-corpus; built on first use, needs apt and python3)
#   SHARED         the shared data folder's parent (default ../shared)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/bench/paper}
runs=${RUNS:-3}
limit=${LIMIT:-12}
ood_limit=${OOD_LIMIT:-8}
temps=${TEMPS:-0,1}
threads=${THREADS:-2}
prompt_tokens=${PROMPT_TOKENS:-640}
head=${HEAD:-models/code-lm-eagle}
corpus=${CODE_CORPUS:-/tmp/eagle2-code-corpus}
shared=${SHARED:-../shared}
model=models/code-lm
bin=build/bin/eagle2
max_new=128
ctx=1024
data=$shared/data/prompts

for n in "$runs" "$limit" "$ood_limit" "$threads" "$prompt_tokens"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$n' is not a positive whole number" >&2; exit 1; }
done
[ -x "$bin" ] || bash scripts/build.sh
[ -f "$corpus/heldout_prompts.jsonl" ] || bash scripts/make_code_corpus.sh "$corpus"
in_domain=("$corpus/heldout_prompts.jsonl" "$data/HumanEval.jsonl.gz")
out_of_domain=("$data/mt_bench_question.jsonl" "$data/eagle/gsm8k_question.jsonl"
               "$data/eagle/alpaca_question.jsonl" "$data/eagle/sum_question.jsonl"
               "$data/eagle/qa_question.jsonl")
for f in "${in_domain[@]}" "${out_of_domain[@]}"; do
  [ -f "$f" ] || { echo "error: $f not found (SHARED=$shared)" >&2; exit 1; }
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
err=$work/stderr

# 1. The prompt sets, cut to fit (their stems, and so bench's set names, stay the originals').
sets=()
for f in "${in_domain[@]}"; do sets+=("$limit:$f"); done
for f in "${out_of_domain[@]}"; do sets+=("$ood_limit:$f"); done
python3 scripts/paper_prompts.py --eagle2 "$bin" --model "$model" --tokens "$prompt_tokens" \
  "$work/prompts" "${sets[@]}" >"$out/prompts.txt"
cat "$out/prompts.txt"
prompt_files=()
for f in "${in_domain[@]}" "${out_of_domain[@]}"; do
  name=$(basename "$f")
  prompt_files+=("$work/prompts/${name%%.*}.jsonl")
done

# 2. The method rows: folders checked by paper_methods.py, then every drafter left checked by a
#    short bench (16 tokens on one prompt, greedy, so the greedy check runs too) before the long
#    runs start: a drafter this build does not know, or whose weights do not load, is left out.
head_args=()
[ -d "$head" ] && head_args=(--draft "$head" --draft-vocab 1024)
HEAD="$head" python3 scripts/paper_methods.py >"$work/methods.tsv"
: >"$out/methods.tsv"
drafters=plain
while IFS=$'\t' read -r method spec setting status; do
  if [ -z "$status" ] && [ "$spec" != plain ]; then
    if ! "$bin" bench -m "$model" "${head_args[@]}" --ctx "$ctx" --prompts "${prompt_files[0]}" \
        --limit 1 --max-new-tokens 16 --temps 0 --warmup 0 --drafters "plain,$spec" \
        -t "$threads" </dev/null >/dev/null 2>"$err"; then
      # The error's last line, without bench's progress bar.
      reason=$(tr '\r\t' '\n ' <"$err" | grep -v '^\[' | grep . | tail -n 1 || true)
      status="not run: ${reason:-the check run failed}"
    fi
  fi
  if [ -n "$status" ]; then
    echo "note: $method ($spec) left out: ${status#not run: }"
  elif [ "$spec" != plain ]; then
    drafters+=",$spec"
  fi
  printf '%s\t%s\t%s\t%s\n' "$method" "$spec" "$setting" "$status" >>"$out/methods.tsv"
done <"$work/methods.tsv"
echo "drafters: $drafters"

# 3. The runs.
csvs=()
start_all=$SECONDS
for r in $(seq 1 "$runs"); do
  start=$SECONDS
  extra=()
  [ "$r" = 1 ] && extra=(--json "$out/bench.json" --svg-dir "$out/per_set")
  "$bin" bench -m "$model" "${head_args[@]}" --ctx "$ctx" --max-new-tokens "$max_new" \
    --prompts "${prompt_files[@]}" --limit 0 --temps "$temps" --drafters "$drafters" \
    -t "$threads" --csv "$out/bench.run$r.csv" "${extra[@]}" >"$out/bench.run$r.txt" 2>"$err" ||
    { tr '\r' '\n' <"$err" | tail -n 5 >&2; echo "error: bench run $r failed" >&2; exit 1; }
  csvs+=("$out/bench.run$r.csv")
  echo "(run $r of $runs: $((SECONDS - start)) s)"
done
echo "(all runs: $((SECONDS - start_all)) s)"

# 4. The table and the charts, from this invocation's runs only.
python3 scripts/paper_table.py --methods "$out/methods.tsv" --prompt-notes "$out/prompts.txt" \
  "${csvs[@]}" >"$out/table.md"
python3 scripts/paper_charts.py "$out" --methods "$out/methods.tsv" "${csvs[@]}"
cat "$out/table.md"
