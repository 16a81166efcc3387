#!/usr/bin/env bash
# One interleaved T=0 bench (session 10): the EAGLE-2 head's settings, the bundled EAGLE-3 head and a
# candidate head N (the 1800-step run; kept in /tmp only, not bundled). Needs the code corpus.
cd /work/main
C=/tmp/eagle2-code-corpus
N=/tmp/e3full/s18
O=models/code-lm-eagle3
d="plain,dynamic:8:6:2:cal,dynamic:auto:8:1:cal,chain:6"
d+=",dynamic:8:6:2@$O,dynamic:auto:8:1:cal@$O"
d+=",dynamic:8:6:2@$N,dynamic:8:6:2:cal@$N,dynamic:auto:8:1:cal@$N,chain:6@$N"
build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
  --prompts $C/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 --drafters "$d" --temps 0 -t 2 \
  --csv /tmp/s10/cmp.run${1:-1}.csv > /tmp/s10/cmp.run${1:-1}.txt 2>&1
echo "exit $?" >> /tmp/s10/cmp.run${1:-1}.txt
