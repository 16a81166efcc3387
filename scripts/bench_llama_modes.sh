#!/usr/bin/env bash
# Greedy decoding on the same GGUF files and prompts: eagle2, plain and speculative, against every
# mode of llama.cpp that needs no second model (issue 13: "EAGLE-2 on a quantized target faster
# than llama.cpp's fastest mode on the same file"). For every run, file and prompt, each mode once,
# in an order rotated per prompt and run (no mode always goes first), N tokens, -t THREADS:
#   llama-completion          plain greedy (--temp 0 --samplers top_k --top-k 1 --ignore-eos, as
#                             scripts/llama_parity.py runs it); rate: its "eval time" line, N - 1
#                             single-token decodes, llama_decode time only. Prompts go in with -p:
#                             llama.cpp's -f drops the file's last newline
#   llama-lookup              prompt-lookup n-gram speculation, its defaults (a draft of up to 3
#                             tokens, --spec-draft-n-max), -n N-1: it stops 1-3 tokens past -n, so
#                             it makes at least N; --no-escape as for llama-completion; rate: its
#                             "decoded N tokens in X seconds"
#   llama-server[:TYPE]       one llama-server (one slot) per SERVER_SPECS entry, "none" plain, the
#                             others --spec-type TYPE with llama.cpp's default n-gram settings;
#                             /completion with n_predict N, temperature 0, top_k 1, ignore_eos,
#                             cache_prompt false; rate: timings.predicted_per_second
#   eagle2[:SPEC]             eagle2 generate -n N --ignore-eos, plain or --spec SPEC --draft HEAD
#                             --draft-vocab DRAFT_VOCAB; rate: its "decode N tokens, X tokens/s"
# Each process sees one prompt: llama-lookup's n-gram cache and eagle2's calibration (:cal) and
# verify cost curve (auto) start cold on every prompt. The servers start afresh for every run and
# file and keep their n-gram tables across that run's prompts (ngram-mod's outlives a request: a
# second pass over the same prompt would draft from the first's text, so no server sees a prompt
# twice). llama-speculative-simple is left out: it needs a draft GGUF, and there is none for this
# model. Every rate counts generation only (no prompt processing), each tool by its own clock.
# Text: every mode's text is compared with llama-completion's of the same run (llama.cpp itself
# flips near-ties between its programs, docs/PARITY.md), and reported, not enforced; eagle2's
# speculative texts must equal eagle2's plain text byte for byte (lossless), or the script stops.
# OUT/results.csv has every row, OUT/table.md per file and mode the range over the runs of the
# run's tokens/s (all prompts' tokens over their time), and the per-run ratios to llama-completion
# and to llama.cpp's fastest mode of that run. OUT/texts keeps every text, OUT/logs
# the servers' logs.
#
# Usage: scripts/bench_llama_modes.sh [FILE.gguf ...]
#   (default: ../shared/data/gguf/code-lm-{q8_0,q4_0,q4_k_m,bf16}.gguf)
#   RUNS          repetitions (default 3)
#   PROMPTS       the first PROMPTS prompts of PROMPT_SET (default 12)
#   PROMPT_SET    .jsonl(.gz) (default ../shared/data/prompts/HumanEval.jsonl.gz)
#   N             tokens generated per prompt (default 128)
#   THREADS       threads of every tool (default 2)
#   OUT           where results.csv, table.md and texts/ go (default /tmp/eagle2-bench-llama-modes)
#   LLAMA         llama.cpp's bin folder (default ../shared/tools/llama.cpp/bin)
#   SERVER_SPECS  llama-server modes (default "none ngram-simple ngram-map-k ngram-map-k4v
#                 ngram-mod ngram-cache"; empty: no server)
#   EAGLE_SPECS   eagle2's drafters besides plain (default "dynamic:auto:8:1:cal chain:6")
#   HEAD          EAGLE head (default models/code-lm-eagle); DRAFT_VOCAB (default 1024)
# Functional check: PROMPTS=2 RUNS=1 scripts/bench_llama_modes.sh ../shared/data/gguf/code-lm-q8_0.gguf
# Run it on a quiet machine: the modes take turns, but anything else running moves them all.
set -euo pipefail
cd "$(dirname "$0")/.."
llama=${LLAMA:-../shared/tools/llama.cpp/bin}
out=${OUT:-/tmp/eagle2-bench-llama-modes}
runs=${RUNS:-3}
n_prompts=${PROMPTS:-12}
prompt_set=${PROMPT_SET:-../shared/data/prompts/HumanEval.jsonl.gz}
n=${N:-128}
threads=${THREADS:-2}
server_specs=${SERVER_SPECS-none ngram-simple ngram-map-k ngram-map-k4v ngram-mod ngram-cache}
eagle_specs=${EAGLE_SPECS-dynamic:auto:8:1:cal chain:6}
head=${HEAD:-models/code-lm-eagle}
draft_vocab=${DRAFT_VOCAB:-1024}
bin=build/bin/eagle2
helper=scripts/llama_modes.py
[ -x "$bin" ] || bash scripts/build.sh
for t in llama-completion llama-lookup; do
  [ -x "$llama/$t" ] || { echo "error: $llama/$t not found (set LLAMA)" >&2; exit 1; }
done
[ -f "$prompt_set" ] || { echo "error: $prompt_set not found (set PROMPT_SET)" >&2; exit 1; }
export LD_LIBRARY_PATH="$llama${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(../shared/data/gguf/code-lm-q8_0.gguf ../shared/data/gguf/code-lm-q4_0.gguf
                                 ../shared/data/gguf/code-lm-q4_k_m.gguf ../shared/data/gguf/code-lm-bf16.gguf)

rm -rf "$out/texts" "$out/prompts" "$out/logs"
mkdir -p "$out/texts" "$out/prompts" "$out/logs"
notes=()
# Server modes this llama-server has: --spec-type and its list of types, from its --help.
spec_types=""
servers=()
if [ -n "$server_specs" ]; then
  if [ ! -x "$llama/llama-server" ]; then
    notes+=("llama-server not found in $llama: no server modes")
  else
    spec_types=$("$llama/llama-server" --help 2>&1 | sed -n 's/^--spec-type \([^ ]*\).*/\1/p' | tr , ' ')
    [ -n "$spec_types" ] || notes+=("this llama-server has no --spec-type: no n-gram speculation, plain only")
    for s in $server_specs; do
      if [ "$s" = none ] || [[ " $spec_types " == *" $s "* ]]; then servers+=("$s")
      else notes+=("this llama-server has no --spec-type $s: left out"); fi
    done
  fi
fi
modes=(llama-completion llama-lookup)
for s in "${servers[@]}"; do modes+=("llama-server$([ "$s" = none ] || echo ":$s")"); done
modes+=(eagle2)
for s in $eagle_specs; do modes+=("eagle2:$s"); done
count=$(python3 "$helper" prompts "$prompt_set" "$n_prompts" "$out/prompts")
[ "$count" -eq "$n_prompts" ] || { echo "error: $prompt_set has only $count prompts" >&2; exit 1; }

pids=()
stop_servers() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
}
tmp=$(mktemp -d)
trap 'stop_servers; rm -rf "$tmp"' EXIT
declare -A port
start_servers() {  # one llama-server per server mode on file $1
  local s p flags
  for s in "${servers[@]}"; do
    p=$(python3 "$helper" port)
    flags=()
    [ -z "$spec_types" ] || [ "$s" = none ] || flags=(--spec-type "$s")
    "$llama/llama-server" -m "$1" --host 127.0.0.1 --port "$p" -t "$threads" -np 1 "${flags[@]}" \
      > "$out/logs/server-$(basename "$1" .gguf)-$s.log" 2>&1 &
    pids+=($!)
    python3 "$helper" wait "$p" "$!" || { tail -5 "$out/logs/server-$(basename "$1" .gguf)-$s.log" >&2; exit 1; }
    port[$s]=$p
  done
}

raw="$tmp/raw.csv"
echo "run,file,prompt,mode,tokens,tps,accept,text" > "$raw"
# Runs tool "$@" into $tmp/o and $tmp/e, up to 5 times while the helper says its output was cut
# short (llama.cpp's logging thread, docs/PARITY.md); then the helper's "TOKENS TPS ACCEPT".
run_tool() {  # run_tool KIND PROMPTFILE TEXT -- CMD...
  local kind=$1 pf=$2 text=$3 rc res
  shift 4
  for _ in 1 2 3 4 5; do
    "$@" > "$tmp/o" 2> "$tmp/e" || { echo "error: $1 failed:" >&2; tail -3 "$tmp/e" >&2; exit 1; }
    case $kind in
      completion) res=$(python3 "$helper" completion "$tmp/o" "$tmp/e" "$text") && rc=0 || rc=$? ;;
      *) res=$(python3 "$helper" "$kind" "$pf" "$tmp/o" "$tmp/e" "$text") && rc=0 || rc=$? ;;
    esac
    [ "$rc" -eq 3 ] || break
  done
  [ "$rc" -eq 0 ] || { echo "error: could not read $1's output (rc $rc)" >&2; exit 1; }
  echo "$res"
}
greedy=(--temp 0 --samplers top_k --top-k 1 --ignore-eos -t "$threads")
for run in $(seq 1 "$runs"); do
  for f in "${files[@]}"; do
    name=$(basename "$f" .gguf)
    start_servers "$f"
    for i in $(seq 0 $((n_prompts - 1))); do
      pf="$out/prompts/p$i.txt"
      IFS= read -r -d '' prompt < "$pf" || true  # every byte, trailing newlines too
      dir="$out/texts/run$run/$name/p$i"
      mkdir -p "$dir"
      k=${#modes[@]}
      for j in $(seq 0 $((k - 1))); do
        mode=${modes[$(((i + run - 1 + j) % k))]}
        text="$dir/${mode//:/_}.txt"
        case $mode in
          llama-completion)
            res=$(run_tool completion "$pf" "$text" -- "$llama/llama-completion" -m "$f" -p "$prompt" \
                  -n "$n" "${greedy[@]}" -no-cnv --no-escape --no-display-prompt) ;;
          llama-lookup)
            res=$(run_tool lookup "$pf" "$text" -- "$llama/llama-lookup" -m "$f" -p "$prompt" \
                  -n $((n - 1)) "${greedy[@]}" --no-escape) ;;
          llama-server*)
            s=${mode#llama-server}; s=${s#:}; s=${s:-none}
            res=$(python3 "$helper" server "${port[$s]}" "$s" "$pf" "$n" "$text") ;;
          eagle2*)
            spec=()
            [ "$mode" = eagle2 ] || spec=(--spec "${mode#eagle2:}" --draft "$head" --draft-vocab "$draft_vocab")
            res=$(run_tool eagle2 "$pf" "$text" -- "$bin" generate -m "$f" -p "$prompt" -n "$n" \
                  --ignore-eos -t "$threads" "${spec[@]}") ;;
        esac
        read -r tok tps acc <<< "$res"
        echo "$run,$name,$i,$mode,$tok,$tps,$acc,$text" >> "$raw"
      done
      for s in $eagle_specs; do  # lossless: EAGLE-2's text is plain decoding's
        cmp -s "$dir/eagle2.txt" "$dir/eagle2_${s//:/_}.txt" || {
          echo "error: eagle2 --spec $s differs from eagle2 plain on $name prompt $i (run $run):" \
               "a lossless bug; texts in $dir" >&2; exit 1; }
      done
    done
    stop_servers
    echo "run $run: $name done" >&2
  done
done
python3 "$helper" table "$raw" "$out"
{
  echo "Greedy, $n tokens, the first $n_prompts prompts of $(basename "$prompt_set"), -t $threads," \
       "$runs run(s); tokens/s: range over runs of each run's total tokens / total time."
  echo
  cat "$out/table.md"
  for x in "${notes[@]}"; do echo "- note: $x"; done
} > "$tmp/table.md"
mv "$tmp/table.md" "$out/table.md"
cat "$out/table.md"
