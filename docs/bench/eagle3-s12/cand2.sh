# usage: cand2.sh NAME STEPS EXTRA...  -> /tmp/s11/NAME (head), /tmp/s11/NAME.log
cd /work/main
C=/tmp/eagle2-code-corpus
N=$1; STEPS=$2; shift 2
/usr/bin/time -v build/bin/eagle2 train-head -m models/code-lm --prompts $C/train_prompts.jsonl --limit 400 \
    --eval-prompts $C/heldout_prompts.jsonl --eval-last 40 --max-new-tokens 128 \
    --arch eagle3 --state-loss 1 --scale-features --teacher-temperature 0 \
    --intermediate 256 --steps $STEPS --batch 4 --lr 3e-3 --seed 1 --dtype bf16 -t 2 "$@" \
    -o /tmp/s11/$N > /tmp/s11/$N.log 2>&1
