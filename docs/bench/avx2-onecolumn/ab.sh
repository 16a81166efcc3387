#!/bin/bash
# The end-to-end A/B of docs/bench/avx2-onecolumn/README.md: one `eagle2 bench` per binary,
# alternated, twice. Expects the builds at /tmp/eagle2.base (commit 80ed0bd) and /tmp/eagle2.mid
# (commit 962680c); run from the repository root with the code corpus at /tmp/eagle2-code-corpus.
C=/tmp/eagle2-code-corpus; H3=models/code-lm-eagle3
D=plain; for t in chain:3 chain:5 chain:6; do D+=",$t,$t@$H3"; done
for r in 1 2; do for b in base mid; do
  /tmp/eagle2.$b bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
    --prompts $C/heldout_prompts.jsonl --limit 20 --max-new-tokens 128 --drafters $D --temps 0 \
    -t 2 > docs/bench/avx2-onecolumn/e2e.$b.$r.txt 2>&1
done; done
