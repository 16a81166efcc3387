cd /work/main
C=/tmp/eagle2-code-corpus
H=models/code-lm-eagle3
d="plain,chain:6,dynamic:auto:8:1:cal,chain:6@$H,dynamic:auto:8:1:cal@$H"
for w in ${WS:-as-is q8_0}; do
build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 --draft-weights $w \
  --prompts $C/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 --drafters "$d" --temps 0 -t 2 \
  --json /tmp/s21/wq.$w.$R.json > /tmp/s21/wq.$w.$R.txt 2>&1
done
