# The paired CPU timing of two head recipes (models/README.md "CPU time"): the EAGLE head's recipe
# (models/README.md) and an EAGLE-3 recipe, one after the other on one quiet machine, with the
# same data flags. usage: pair.sh NAME STEPS EXTRA...  ->  /tmp/s18/NAME, /tmp/s18/NAME.log,
# /tmp/s18/eagle_head.log (skipped when it exists)
cd "$(dirname "$0")/../../.." || exit 1
C=/tmp/eagle2-code-corpus
N=$1; STEPS=$2; shift 2
mkdir -p /tmp/s18
DATA="-m models/code-lm --prompts $C/train_prompts.jsonl --limit 400 --eval-prompts $C/heldout_prompts.jsonl --eval-last 40 --max-new-tokens 128"
/usr/bin/time -v build/bin/eagle2 train-head $DATA \
    --arch eagle3 --state-loss 1 --scale-features --teacher-temperature 0 \
    --intermediate 256 --steps "$STEPS" --batch 4 --lr 3e-3 --seed 1 --dtype bf16 -t 2 "$@" \
    -o /tmp/s18/"$N" > /tmp/s18/"$N".log 2>&1
[ -e /tmp/s18/eagle_head.log ] ||
  /usr/bin/time -v build/bin/eagle2 train-head $DATA --steps 800 --lr 3e-3 --seed 1 --dtype bf16 \
      -t 2 -o /tmp/s18/eagle_head > /tmp/s18/eagle_head.log 2>&1
