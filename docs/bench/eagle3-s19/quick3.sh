# Session 19's T = 0 bench of the EAGLE-2 head, the bundled EAGLE-3 head and the schedule head
# retrained with both training cuts (`pair.sh mix7e6b 1500 --ttt-steps 7 --ttt-short-steps 3
# --ttt-full-every 6`, in /tmp/s18/mix7e6b), on the trees that were each head's best somewhere:
# session 18's quick.sh, run RUNS times (default 3). Output: /tmp/s19/quick.runN.{txt,csv}.
cd "$(dirname "$0")/../../.." || exit 1
H3=models/code-lm-eagle3; H4=${H4:-/tmp/s18/mix7e6b}; d=plain
for t in chain:3 chain:4 chain:5 chain:6 dynamic:8:6:2:cal dynamic:auto:8:1:cal; do d+=",$t,$t@$H3,$t@$H4"; done
mkdir -p /tmp/s19
for run in $(seq 1 "${RUNS:-3}"); do
  build/bin/eagle2 bench -m models/code-lm --draft models/code-lm-eagle --draft-vocab 1024 \
    --prompts /tmp/eagle2-code-corpus/heldout_prompts.jsonl --limit 40 --max-new-tokens 128 \
    --drafters "$d" --temps 0 -t 2 --csv /tmp/s19/quick.run$run.csv 2>/dev/null |
    tee /tmp/s19/quick.run$run.txt
done
