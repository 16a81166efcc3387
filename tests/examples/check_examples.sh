#!/usr/bin/env bash
# The example programs (examples/) on the bundled model, against the CLI:
#   check_examples.sh speculative CLI EXAMPLE MODEL HEAD
#   check_examples.sh batch       CLI EXAMPLE MODEL HEAD
# speculative: speculative_generate prints, byte for byte, what `eagle2 generate` prints for the
# same prompt with plain greedy decoding (speculation is lossless), its stats report drafts that
# the target accepted (tau > 1), and bad arguments get the usage or one error line.
# batch: batch_generate's prompts decoded together print what `eagle2 generate` prints for each
# prompt alone, one after the other.
set -euo pipefail
mode=$1 cli=$2 example=$3 model=$4 head=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/eagle2-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=40
prompts=($'def binary_search(items, target):\n    lo, hi = 0, len(items) - 1\n'
         $'import os\nimport sys\n\n\ndef main(argv=None):\n'
         $'class Stack:\n    def __init__(self):\n')

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The CLI's plain greedy output for each prompt, one after the other.
: >"$work/expected"
expected_for() {
  "$cli" generate -m "$model" -p "$1" -n "$n" >>"$work/expected" 2>"$work/cli.err" ||
    fail "eagle2 generate: $(cat "$work/cli.err")"
}

case $mode in
speculative)
  expected_for "${prompts[0]}"
  "$example" "$model" "$head" "${prompts[0]}" "$n" >"$work/actual" 2>"$work/stats" ||
    fail "speculative_generate failed: $(cat "$work/stats")"
  cat "$work/stats"
  cmp "$work/expected" "$work/actual" ||
    fail "speculative_generate's text differs from eagle2 generate's greedy text:" \
         "$(diff "$work/expected" "$work/actual")"
  tau=$(sed -n 's/.*tau \([0-9.]*\).*/\1/p' "$work/stats")
  [[ -n $tau ]] || fail "no 'tau' in the statistics"
  awk -v t="$tau" 'BEGIN { exit !(t > 1) }' || fail "tau $tau: no draft token was accepted"
  grep -q '^accepted draft tokens per cycle' "$work/stats" || fail "no acceptance histogram"

  # No arguments: the usage, exit 2. A model folder that is not one: one error line, exit 1.
  status=0
  "$example" >/dev/null 2>"$work/usage" || status=$?
  [[ $status == 2 ]] && grep -q '^usage: ' "$work/usage" || fail "no usage for no arguments"
  status=0
  "$example" "$work/no-such-model" "$head" "x" >/dev/null 2>"$work/error" || status=$?
  [[ $status == 1 && $(wc -l <"$work/error") == 1 ]] && grep -q '^error: .*no-such-model' "$work/error" ||
    fail "a missing model: want one 'error:' line naming it and exit 1, got exit $status:" \
         "$(cat "$work/error")"
  ;;
batch)
  for p in "${prompts[@]}"; do expected_for "$p"; done
  "$example" "$model" "$head" "$n" "${prompts[@]}" >"$work/actual" 2>"$work/stats" ||
    fail "batch_generate failed: $(cat "$work/stats")"
  cat "$work/stats"
  cmp "$work/expected" "$work/actual" ||
    fail "batch_generate's texts differ from eagle2 generate's for each prompt alone:" \
         "$(diff "$work/expected" "$work/actual")"
  grep -q "^${#prompts[@]} sequences in [0-9]* steps" "$work/stats" || fail "no batch summary"
  status=0
  "$example" "$model" "$head" >/dev/null 2>"$work/usage" || status=$?
  [[ $status == 2 ]] && grep -q '^usage: ' "$work/usage" || fail "no usage without prompts"
  ;;
*)
  fail "unknown mode '$mode'"
  ;;
esac
echo "ok: $mode example"
