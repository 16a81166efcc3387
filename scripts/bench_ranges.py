#!/usr/bin/env python3
"""Figures of several `eagle2 bench --csv` runs of the same benchmark as ranges.

Usage: scripts/bench_ranges.py RUN1.csv RUN2.csv ... > ranges.md

For every prompt set and temperature it prints a Markdown table: each drafter's speedup, tau and
tokens/s as "min-max" over the runs, with plain decoding's tokens/s of the same runs above it, so
that no speedup is read without the plain rate it is relative to. Timings on a shared machine move
between runs; one run's figure alone says little.
"""
import csv
import sys
from collections import OrderedDict


def span(values, fmt):
    lo, hi = min(values), max(values)
    a, b = fmt.format(lo), fmt.format(hi)
    return a if a == b else a + "-" + b


def main(paths):
    if not paths:
        sys.exit("usage: bench_ranges.py RUN.csv [RUN.csv ...]")
    groups = OrderedDict()  # (prompt_set, temperature) -> drafter -> list of rows
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["prompt_set"], float(row["temperature"]))
                groups.setdefault(key, OrderedDict()).setdefault(row["drafter"], []).append(row)
    print(f"Ranges over {len(paths)} runs ({', '.join(paths)}).\n")
    for (prompt_set, temp), drafters in groups.items():
        plain = drafters.get("plain", [])
        rate = span([float(r["tokens_per_second"]) for r in plain], "{:.0f}") if plain else "?"
        print(f"**{prompt_set}, T = {temp:g}**: plain decoding {rate} tokens/s\n")
        print("| drafter | speedup | tau | tokens/s | runs |")
        print("|---|---|---|---|---|")
        for drafter, rows in drafters.items():
            if drafter == "plain":
                continue
            speedups = [float(r["speedup"]) for r in rows]
            taus = [float(r["tau"]) for r in rows]
            rates = [float(r["tokens_per_second"]) for r in rows]
            print(f"| `{drafter}` | {span(speedups, '{:.2f}')}x | {span(taus, '{:.2f}')} | "
                  f"{span(rates, '{:.0f}')} | {len(rows)} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
