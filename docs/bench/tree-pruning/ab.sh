#!/bin/bash
# A/B of frontier pruning: /tmp/e2.r8.4 (d906d7d's code) vs /tmp/e2.prune (pruning)
C=/tmp/eagle2-code-corpus; H3=models/code-lm-eagle3
D=plain; for t in dynamic:8:6:2 dynamic:8:6:2:cal dynamic:60:5:10; do D+=",$t,$t@$H3"; done
for r in 1 2 3; do for b in r8.4 prune; do
  /tmp/e2.$b bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
    --prompts $C/heldout_prompts.jsonl --limit 20 --max-new-tokens 128 --drafters $D --temps 0 \
    -t 2 > docs/bench/tree-pruning/prune.$b.$r.txt 2>&1
done; done
touch docs/bench/tree-pruning/prune.done
