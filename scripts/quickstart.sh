#!/usr/bin/env bash
# The README's first command: install missing Debian packages, build everything, then run the main
# job: `eagle2 demo`, the bundled Python code model completing a few prompts with plain decoding
# and with EAGLE-2 (identical text), with tau and the measured speedup.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh build
echo
build/bin/eagle2 demo
