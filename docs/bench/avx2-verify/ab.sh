#!/bin/bash
C=/tmp/eagle2-code-corpus
D=plain,chain:6,chain:6@models/code-lm-eagle3,dynamic:auto:8:1:cal,dynamic:auto:8:1:cal@models/code-lm-eagle3
for r in 1 2; do for b in base att; do
/tmp/eagle2.$b bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 --prompts $C/heldout_prompts.jsonl --limit 20 --max-new-tokens 128 --drafters $D --temps 0 -t 2 > /tmp/ab_att.$b.$r.txt 2>&1
done; done
echo done > /tmp/ab_att.done
