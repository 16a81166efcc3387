#!/usr/bin/env bash
# A projection of EAGLE-2's speed for real model sizes on this CPU (labelled a projection: no
# trained 1B/7B model or head is involved). It combines
#   - τ measured on the bundled pair (bench.run1.csv from scripts/bench_results.sh), per drafter and
#     temperature, averaged over the prompt sets;
#   - the verify cost curve t(k) of random-weight bf16 models with the shapes of a 1.1B (TinyLlama)
#     and a 6.7B (LLaMA-7B) model, measured here with `eagle2 cost-curve`;
#   - the cost of one draft-head level h(k), measured as a 1-layer random model of the same shape
#     (one decoder layer plus the lm_head, which is what a head level runs; the head's fc, 2d x d,
#     is left out: 6 % of a 7B head level's bytes);
# as  speedup = τ t(1) / (t(T) + draft),  draft = h(ceil τ) (catch-up and root level) + one h per
# expansion level (1 row for a chain, K rows for a dynamic tree). The same formula on the bundled
# model's own curves is printed next to its measured speedup, as a check of the model: it leaves
# out what a cycle spends outside the two forwards (the head's weights evicted by verification,
# the catch-up, tree building, KV compaction, sampling), so it reads high, and the 1B/7B figures
# are upper bounds in the same proportion.
#
# Usage: scripts/projection.sh [BENCH_CSV (default docs/bench/code/bench.run1.csv)] [WORK_DIR]
# Writes about 16 GB of random models to WORK_DIR (default /tmp/eagle2-projection); 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bench_csv=${1:-docs/bench/code/bench.run1.csv}
work=${2:-/tmp/eagle2-projection}
bin=build/bin/eagle2
[ -f "$bench_csv" ] || { echo "error: $bench_csv not found (run scripts/bench_results.sh)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 is needed (apt-get install python3)" >&2; exit 1; }
mkdir -p "$work"

make_model() {  # dir, make-random arguments
  local dir=$1
  shift
  [ -f "$dir/model.safetensors" ] || "$bin" make-random -o "$dir" --dtype bf16 "$@" >/dev/null
}
curve() {  # model dir, out file, ks[, EAGLE2_WEIGHTS]
  EAGLE2_WEIGHTS=${4:-hugepages} "$bin" cost-curve -m "$1" --ks "$3" --context 256 --reps 3 -t 2 >"$2"
}

code_shape=(--hidden 512 --intermediate 768 --heads 8 --kv-heads 4 --vocab 4096 --tie)
make_model "$work/code-head" --preset small "${code_shape[@]}" --layers 1
make_model "$work/llama-1b" --preset llama-1b
make_model "$work/llama-1b-head" --preset llama-1b --layers 1
make_model "$work/llama-7b" --preset llama-7b
make_model "$work/llama-7b-head" --preset llama-7b --layers 1

ks=1,2,4,8,16,32,64
curve models/code-lm "$work/code.curve" $ks
curve "$work/code-head" "$work/code-head.curve" 1,2,4,8,16
curve "$work/llama-1b" "$work/llama-1b.curve" $ks
curve "$work/llama-1b-head" "$work/llama-1b-head.curve" 1,2,4,8,16
# The 7B model is used in place (mmap): a copy would need its 13.5 GB twice in RAM.
curve "$work/llama-7b" "$work/llama-7b.curve" 1,2,4,8,16,32 mmap
curve "$work/llama-7b-head" "$work/llama-7b-head.curve" 1,2,4,8,16

python3 - "$bench_csv" "$work" <<'EOF'
import csv, math, re, sys
bench, work = sys.argv[1], sys.argv[2]

def curve(path):  # {k: ms per forward}
    pts = {}
    for line in open(path):
        m = re.match(r"\s+(\d+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s*$", line)
        if m:
            pts[int(m.group(1))] = float(m.group(2))
    return pts

def at(pts, k):  # piecewise linear between measured k, linear past the last
    ks = sorted(pts)
    if k <= ks[0]:
        return pts[ks[0]]
    for a, b in zip(ks, ks[1:]):
        if k <= b:
            return pts[a] + (pts[b] - pts[a]) * (k - a) / (b - a)
    a, b = ks[-2], ks[-1]
    return pts[b] + (pts[b] - pts[a]) / (b - a) * (k - b)

def shape(label):  # verify tokens T, [rows per expansion level]
    m = re.fullmatch(r"chain:(\d+)", label)
    if m:
        d = int(m.group(1))
        return d + 2, [1] * d
    m = re.fullmatch(r"static:(\d+)", label)
    if m:  # EAGLE-1's mc_sim_7b_63 pruned to N tokens: one level per depth, a row per parent
        mc = [[0], [1], [2], [3], [0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0],
              [0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [0, 1, 1], [0, 2, 0], [0, 2, 1],
              [1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
        paths = mc[:int(m.group(1)) - 1]
        depth = max(len(p) for p in paths)
        return len(paths) + 1, [len({tuple(p[:-1]) for p in paths if len(p) == d})
                                for d in range(2, depth + 1)]
    m = re.fullmatch(r"dynamic:(\d+):(\d+):(\d+)(:cal)?", label)
    if m:
        t, d, k = map(int, m.groups()[:3])
        return t, [k] * d
    return None

tau, measured = {}, {}
for s in csv.DictReader(open(bench)):
    key = (s["drafter"], float(s["temperature"]))
    tau.setdefault(key, []).append(float(s["tau"]))
    measured.setdefault(key, []).append(float(s["speedup"]))
mean = lambda v: sum(v) / len(v)

sizes = [("bundled code model (26 M, check)", "code", "code-head"),
         ("LLaMA 1.1B shape, bf16", "llama-1b", "llama-1b-head"),
         ("LLaMA-7B shape, bf16", "llama-7b", "llama-7b-head")]
drafters = [d for d in ["chain:6", "dynamic:8:6:2:cal", "dynamic:16:6:2:cal", "dynamic:8:6:2",
                        "static:8", "dynamic:60:5:10"]
            if (d, 0.0) in tau]
print("PROJECTION (measured cost curves x τ of the bundled pair; not a run of a trained 1B/7B model)")
for name, tgt, head in sizes:
    t, h = curve(f"{work}/{tgt}.curve"), curve(f"{work}/{head}.curve")
    print(f"\n{name}: plain {t[1]:.1f} ms/token; head level h(1) = {h[1]:.2f} ms "
          f"({100 * h[1] / t[1]:.0f}% of a target step); t(8)/t(1) = {at(t, 8) / t[1]:.2f}, "
          f"t(16)/t(1) = {at(t, 16) / t[1]:.2f}")
    print("| drafter | T=0: τ | T=0: projected speedup | T=1: τ | T=1: projected speedup |"
          + (" measured T=0 / T=1 |" if tgt == "code" else ""))
    print("|---|---|---|---|---|" + ("---|" if tgt == "code" else ""))
    for d in drafters:
        T, levels = shape(d)
        row = f"| {d} |"
        for temp in (0.0, 1.0):
            if (d, temp) not in tau:
                row += " - | - |"
                continue
            ta = mean(tau[(d, temp)])
            draft = at(h, math.ceil(ta)) + sum(at(h, r) for r in levels)
            row += f" {ta:.2f} | {ta * t[1] / (at(t, T) + draft):.2f}x |"
        if tgt == "code":
            row += " " + " / ".join(f"{mean(measured[(d, x)]):.2f}x" for x in (0.0, 1.0) if (d, x) in measured) + " |"
        print(row)
EOF
