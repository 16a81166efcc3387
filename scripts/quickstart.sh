#!/usr/bin/env bash
# The README's first command: build everything, then run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh build
models=${EAGLE2_MODELS:-../shared/data/models}
model=$models/stories260K-hf
head=$models/stories260K-eagle-head
if [[ ! -f $model/config.json ]]; then
  echo "Built build/bin/eagle2. No default model found at $model."
  echo "Run: build/bin/eagle2 generate -m MODEL_DIR -p 'your prompt' -n 64 [--draft HEAD_DIR]"
  echo "(MODEL_DIR: a Hugging Face LLaMA folder with config.json, *.safetensors, tokenizer.model)"
  exit 0
fi
build/bin/eagle2 info -m "$model"
echo
echo "== plain decoding"
build/bin/eagle2 generate -m "$model" -p "Once upon a time" -n 120
if [[ -f $head/config.json ]]; then
  echo
  echo "== EAGLE-2 speculative decoding (identical text at temperature 0)"
  build/bin/eagle2 generate -m "$model" --draft "$head" -p "Once upon a time" -n 120
fi
