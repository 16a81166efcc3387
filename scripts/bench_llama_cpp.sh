#!/usr/bin/env bash
# Plain decoding and prompt processing, eagle2 against llama.cpp's llama-bench, on the same GGUF
# files, interleaved in one run (issue 13's speed criterion). For every file and repetition:
#   llama-bench -p 512 -n 128 -t T -r 1 for T in 1 2 (llama.cpp's defaults otherwise: flash
#   attention auto, f16 K/V cache), then eagle2 generate with the same thread counts: a 512-token
#   prompt (prompt tokens/s) and 128 tokens decoded from a one-token prompt with --ignore-eos
#   (decode tokens/s).
# Each tool is credited with its faster thread count per repetition; the table gives the range over
# the repetitions and the eagle2/llama.cpp ratio of each repetition.
#
# Usage: scripts/bench_llama_cpp.sh [FILE.gguf ...]   (default: ../shared/data/gguf/code-lm-*.gguf)
#   RUNS     repetitions (default 3)
#   OUT      where results.csv and table.md go (default /tmp/eagle2-bench-llama-cpp)
#   LLAMA    llama.cpp's bin folder (default ../shared/tools/llama.cpp/bin)
# Run it on a quiet machine: the two tools take turns, but anything else running moves both.
set -euo pipefail
cd "$(dirname "$0")/.."
llama=${LLAMA:-../shared/tools/llama.cpp/bin}
out=${OUT:-/tmp/eagle2-bench-llama-cpp}
runs=${RUNS:-3}
bin=build/bin/eagle2
[ -x "$bin" ] || bash scripts/build.sh
[ -x "$llama/llama-bench" ] || { echo "error: $llama/llama-bench not found (set LLAMA)" >&2; exit 1; }
export LD_LIBRARY_PATH="$llama${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(../shared/data/gguf/code-lm-bf16.gguf ../shared/data/gguf/code-lm-q8_0.gguf
                                 ../shared/data/gguf/code-lm-q4_0.gguf ../shared/data/gguf/code-lm-q4_k_m.gguf)
mkdir -p "$out"
csv="$out/results.csv"
echo "run,file,tool,threads,pp512,tg128" > "$csv"
# 512 prompt ids: 1 (BOS) then 511 ids cycling through 100..999 (valid in every vocabulary here).
ids=1
for i in $(seq 1 511); do ids="$ids,$((100 + (i * 37) % 900))"; done
stat_field() { sed -n "s/.*$1 [0-9]* tokens, \([0-9.]*\) tokens\/s.*/\1/p"; }
for run in $(seq 1 "$runs"); do
  for f in "${files[@]}"; do
    name=$(basename "$f" .gguf)
    for t in 1 2; do
      "$llama/llama-bench" -m "$f" -p 512 -n 128 -t "$t" -r 1 -o csv 2>/dev/null |
        python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
pp = [r["avg_ts"] for r in rows if r["n_prompt"] == "512"]
tg = [r["avg_ts"] for r in rows if r["n_gen"] == "128"]
print(",".join([sys.argv[1], sys.argv[2], "llama.cpp", sys.argv[3], pp[0], tg[0]]))' "$run" "$name" "$t" >> "$csv"
      pp=$("$bin" generate -m "$f" --ids "$ids" -n 1 -t "$t" 2>&1 >/dev/null | stat_field prompt)
      tg=$("$bin" generate -m "$f" --ids 1 -n 128 --ignore-eos -t "$t" 2>&1 >/dev/null | stat_field decode)
      echo "$run,$name,eagle2,$t,$pp,$tg" >> "$csv"
    done
    echo "run $run: $name done" >&2
  done
done
python3 - "$csv" > "$out/table.md" <<'PY'
import csv, sys
from collections import defaultdict
best = defaultdict(dict)  # (file, tool) -> run -> (pp, tg, threads of best tg)
for r in csv.DictReader(open(sys.argv[1])):
    key, run = (r["file"], r["tool"]), int(r["run"])
    pp, tg = float(r["pp512"]), float(r["tg128"])
    old = best[key].get(run)
    best[key][run] = (max(pp, old[0]) if old else pp, max(tg, old[1]) if old else tg)
def rng(v): return f"{min(v):.1f}-{max(v):.1f}" if min(v) != max(v) else f"{v[0]:.1f}"
print("| file | llama.cpp tg128 t/s | eagle2 tg128 t/s | eagle2 / llama.cpp (decode) | llama.cpp pp512 t/s | eagle2 pp512 t/s | eagle2 / llama.cpp (prompt) |")
print("|---|---|---|---|---|---|---|")
for f in dict.fromkeys(k[0] for k in best):
    l, e = best[(f, "llama.cpp")], best[(f, "eagle2")]
    runs = sorted(set(l) & set(e))
    dec = [e[r][1] / l[r][1] for r in runs]
    pro = [e[r][0] / l[r][0] for r in runs]
    print(f"| {f} | {rng([l[r][1] for r in runs])} | {rng([e[r][1] for r in runs])} | {min(dec):.2f}-{max(dec):.2f}x "
          f"| {rng([l[r][0] for r in runs])} | {rng([e[r][0] for r in runs])} | {min(pro):.2f}-{max(pro):.2f}x |")
PY
cat "$out/table.md"
