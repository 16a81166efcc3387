# A/B of ragged EAGLE-3 training windows (docs/TRAINING.md "Ragged windows").
# /tmp/eagle2-ragged: build/bin/eagle2 at the ragged-windows commit; /tmp/eagle2-rect: the same
# build with Eagle3Batch::window's `w.lengths = ...` line commented out (every window runs all T
# rows, as before). Round 1 ran rect then ragged, round 2 ragged then rect; logs beside this file.
cd "$(dirname "$0")/../../.." || exit 1
C=/tmp/eagle2-code-corpus
run() {  # run VARIANT ROUND
  /usr/bin/time -v /tmp/eagle2-"$1" train-head -m models/code-lm --prompts $C/train_prompts.jsonl --limit 100 \
      --eval-prompts $C/heldout_prompts.jsonl --eval-last 10 --max-new-tokens 128 --no-tau \
      --arch eagle3 --ttt-steps 3 --state-loss 1 --scale-features --teacher-temperature 0 \
      --intermediate 256 --steps 300 --batch 4 --lr 3e-3 --seed 1 --dtype bf16 -t 2 \
      -o /tmp/ab/"$1$2" > /tmp/ab/"$1$2".log 2>&1
}
mkdir -p /tmp/ab
run rect 1; run ragged 1; run ragged 2; run rect 2
