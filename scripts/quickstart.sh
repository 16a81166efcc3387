#!/usr/bin/env bash
# The README's first command: build everything, then run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh build
model=${EAGLE2_MODEL:-../shared/data/models/stories260K-hf}
if [[ ! -f $model/config.json ]]; then
  echo "Built build/bin/eagle2. No default model found at $model."
  echo "Run: build/bin/eagle2 generate -m MODEL_DIR -p 'your prompt' -n 64"
  echo "(MODEL_DIR: a Hugging Face LLaMA folder with config.json, *.safetensors, tokenizer.model)"
  exit 0
fi
build/bin/eagle2 info -m "$model"
echo
build/bin/eagle2 generate -m "$model" -p "Once upon a time" -n 120
