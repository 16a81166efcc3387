# One interleaved T=0 bench: EAGLE-2's settings, the bundled EAGLE-3 head, candidates (args: dirs)
cd /work/main
C=/tmp/eagle2-code-corpus
O=models/code-lm-eagle3
R=${RUN:-1}
d="plain,dynamic:8:6:2:cal,dynamic:auto:8:1:cal,chain:6"
for h in $O "$@"; do d+=",dynamic:8:6:2@$h,dynamic:8:6:2:cal@$h,dynamic:auto:8:1:cal@$h,chain:6@$h"; done
build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
  --prompts $C/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 --drafters "$d" --temps 0 -t 2 \
  --csv /tmp/s11/cmp.run$R.csv --json /tmp/s11/cmp.run$R.json > /tmp/s11/cmp.run$R.txt 2>&1
echo "exit $?" >> /tmp/s11/cmp.run$R.txt
