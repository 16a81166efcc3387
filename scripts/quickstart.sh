#!/usr/bin/env bash
# The README's first command: install missing Debian packages, build everything, then run the main
# job: `eagle2 demo`, the bundled Python code model completing a few prompts with plain decoding
# and with EAGLE-2 (identical text), with tau and the measured speedup. Then the same prompts
# sampled at T = 0.7 with a seed: EAGLE-2's text is again plain sampling's for that seed (checked
# here and by the demo), and a sampled tree (docs/SAMPLING.md), which samples the same
# distribution but not the same text, is timed beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh build
echo
build/bin/eagle2 demo
echo
sampled=$(mktemp)
trap 'rm -f "$sampled"' EXIT
build/bin/eagle2 demo --temp 0.7 --seed 1 -n 64 | tee "$sampled"
grep -q "^EAGLE-2's completions are identical to plain sampling's with the same seed.$" "$sampled" ||
  { echo "error: the sampled demo did not confirm same seed, same text" >&2; exit 1; }
