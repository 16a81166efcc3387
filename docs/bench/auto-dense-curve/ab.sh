#!/usr/bin/env bash
# A/B: auto budget with the old (k = 1, 2, 4, 8..64) and the dense (k = 1..8, 16..64) start-up
# cost curve; both heads; alternated rounds.
cd /work/main
for r in 1 2 3; do
  for v in old new; do
    /tmp/eagle2-$v bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
      --prompts /tmp/eagle2-code-corpus/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 \
      --drafters plain,dynamic:auto:8:1:cal,dynamic:auto:8:1:cal@models/code-lm-eagle3,chain:5 \
      --temps 0 -t 2 --csv /tmp/ab/$v.$r.csv 2>/dev/null > /tmp/ab/$v.$r.txt
  done
done
