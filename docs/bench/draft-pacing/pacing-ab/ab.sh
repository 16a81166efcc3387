cd /work/main
C=/tmp/eagle2-code-corpus
H=models/code-lm-eagle3
d="plain,chain:6,dynamic:auto:8:1:cal,chain:6@$H,dynamic:auto:8:1:cal@$H"
for R in 1 2; do for b in old new; do
/tmp/s21/eagle2.$b bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
  --prompts $C/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 --drafters "$d" --temps 0 -t 2 \
  --json /tmp/s21/ab.$b.$R.json > /tmp/s21/ab.$b.$R.txt 2>&1
done; done
d="plain,dynamic:auto:8:1:cal,dynamic:auto:8:1:cal@$H"
for b in old new; do
/tmp/s21/eagle2.$b bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
  --prompts $C/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 --drafters "$d" --temps 1 -t 2 \
  --json /tmp/s21/ab1.$b.json > /tmp/s21/ab1.$b.txt 2>&1
done
echo done > /tmp/s21/ab.done
