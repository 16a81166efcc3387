# A one-run T = 0 bench of the EAGLE-2 head, the bundled EAGLE-3 head and the candidate
# trained by `pair.sh mix7e6 1500 --ttt-steps 7 --ttt-short-steps 3 --ttt-full-every 6` (in
# /tmp/s18/mix7e6), on the trees that were each head's best somewhere. Output: quick.txt / .csv.
cd "$(dirname "$0")/../../.." || exit 1
H3=models/code-lm-eagle3; H4=/tmp/s18/mix7e6; d=plain
for t in chain:3 chain:4 chain:5 chain:6 dynamic:8:6:2:cal dynamic:auto:8:1:cal; do d+=",$t,$t@$H3,$t@$H4"; done
build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
  --prompts /tmp/eagle2-code-corpus/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 \
  --drafters "$d" --temps 0 -t 2 --csv /tmp/s18/quick.csv | tee /tmp/s18/quick.txt
