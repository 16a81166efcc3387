#!/usr/bin/env python3
"""The figures of scripts/bench_quantized.sh as ranges over its runs, in Markdown.

Usage: scripts/quantized_ranges.py OUT_DIR FILE [FILE ...] > OUT_DIR/ranges.md

FILE names a quantization (bf16, q8_0, ...): its runs are OUT_DIR/FILE/cost.runN.csv
(`eagle2 cost-curve --csv`) and OUT_DIR/FILE/bench.runN.csv (`eagle2 bench --csv`). Every figure is
"min-max" over the runs; no speedup is shown without the plain tokens/s it is relative to. Timings
on a shared machine move between runs; one run's figure alone says little.

Also the loader for scripts/quantized_charts.py (standard library only, as both are).
"""
import csv
import glob
import os
import re
import sys
from collections import OrderedDict


def _run_files(out, name, kind):
    """OUT/name/kind.runN.csv in run order (run 10 after run 9)."""
    paths = glob.glob(os.path.join(out, name, kind + ".run*.csv"))
    number = lambda p: int(re.search(r"\.run(\d+)\.csv$", p).group(1))
    return sorted((p for p in paths if re.search(r"\.run\d+\.csv$", p)), key=number)


def _read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def load(out, name):
    """(cost, bench) of one file over its runs.

    cost: k -> {"relative": [...], "ms": [...]}, k ascending; bench: drafter -> list of rows
    (dicts of floats where numeric), one per run, drafters in the bench's order."""
    cost = {}
    for path in _run_files(out, name, "cost"):
        for row in _read(path):
            point = cost.setdefault(int(row["k"]), {"relative": [], "ms": []})
            point["relative"].append(float(row["cost_relative"]))
            point["ms"].append(float(row["ms_per_forward"]))
    bench = OrderedDict()
    for path in _run_files(out, name, "bench"):
        for row in _read(path):
            if float(row["temperature"]) != 0:
                continue
            parsed = {}
            for key, value in row.items():
                try:
                    parsed[key] = float(value)
                except (TypeError, ValueError):
                    parsed[key] = value
            bench.setdefault(row["drafter"], []).append(parsed)
    return OrderedDict(sorted(cost.items())), bench


def run_count(out, name):
    return len(_run_files(out, name, "bench"))


def span(values, fmt):
    if not values:
        return "?"
    a, b = fmt.format(min(values)), fmt.format(max(values))
    return a if a == b else a + "-" + b


def column(rows, key):
    return [r[key] for r in rows if isinstance(r.get(key), float)]


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: quantized_ranges.py OUT_DIR FILE [FILE ...]")
    out, names = argv[0], argv[1:]
    data = OrderedDict((n, load(out, n)) for n in names)
    counts = sorted({run_count(out, n) for n in names})
    print(f"Ranges over {'/'.join(map(str, counts))} runs (raw CSVs in {out}/FILE/).\n")

    print("**Verify cost of k tokens in one forward, relative to one token** (`eagle2 "
          "cost-curve`, tree-shaped batches on a 256-token context; the first row is one token's "
          "forward in ms)\n")
    print("| k | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    ks = sorted({k for cost, _ in data.values() for k in cost})
    if 1 in ks:
        print("| 1 (ms) | " + " | ".join(
            span(data[n][0].get(1, {}).get("ms", []), "{:.3f}") for n in names) + " |")
    for k in ks:
        print(f"| {k} | " + " | ".join(
            span(data[n][0].get(k, {}).get("relative", []), "{:.2f}") for n in names) + " |")
    print()

    drafters = OrderedDict()
    for _, bench in data.values():
        for d in bench:
            drafters[d] = True
    print("**Speedup over plain decoding at T = 0** (`eagle2 bench`, HumanEval; plain decoding's "
          "tokens/s in the first row)\n")
    print("| drafter | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| plain tokens/s | " + " | ".join(
        span(column(data[n][1].get("plain", []), "tokens_per_second"), "{:.0f}") for n in names)
        + " |")
    for d in drafters:
        if d == "plain":
            continue
        cells = [span(column(data[n][1].get(d, []), "speedup"), "{:.2f}") + "x" for n in names]
        print(f"| `{d}` | " + " | ".join(cells) + " |")
    print()

    auto = [d for d in drafters if d.startswith("dynamic:auto")]
    for d in auto:
        cells = [f"{n} {span(column(data[n][1].get(d, []), 'tree_tokens'), '{:.1f}')}"
                 for n in names]
        print(f"The auto budget `{d}` verified on average " + ", ".join(cells) +
              " tokens per cycle (root included).\n")

    for n in names:
        bench = data[n][1]
        plain = span(column(bench.get("plain", []), "tokens_per_second"), "{:.0f}")
        print(f"**{n}**: plain decoding {plain} tokens/s\n")
        print("| drafter | speedup | tau | tokens/s | tree tokens | prompts |")
        print("|---|---|---|---|---|---|")
        for d, rows in bench.items():
            if d == "plain":
                continue
            prompts = span(column(rows, "runs"), "{:.0f}")
            print(f"| `{d}` | {span(column(rows, 'speedup'), '{:.2f}')}x | "
                  f"{span(column(rows, 'tau'), '{:.2f}')} | "
                  f"{span(column(rows, 'tokens_per_second'), '{:.0f}')} | "
                  f"{span(column(rows, 'tree_tokens'), '{:.1f}')} | {prompts} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
