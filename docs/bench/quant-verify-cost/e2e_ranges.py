#!/usr/bin/env python3
"""Ranges over the runs of e2e.sh's outputs: bench (plain tokens/s, speedup, tau, mean tree size)
and cost-curve (ms at k = 1, cost / k=1) per file and binary, as Markdown.
Usage: e2e_ranges.py DIR"""
import csv, glob, re, sys
from collections import defaultdict

d = sys.argv[1]
def rng(v, f="{:.2f}"):
    return f.format(min(v)) if min(v) == max(v) else (f.format(min(v)) + "-" + f.format(max(v)))

print("| file | binary | plain tok/s | drafter | speedup | tau | mean tree tokens |")
print("|---|---|---|---|---|---|---|")
for q in ("q4_k_m", "q8_0", "q4_0"):
    for b in ("base", "new"):
        rows = defaultdict(lambda: defaultdict(list))
        for path in sorted(glob.glob(f"{d}/bench-{q}-{b}.run*.csv")):
            for r in csv.DictReader(open(path)):
                for k in ("tokens_per_second", "speedup", "tau", "tree_tokens"):
                    rows[r["drafter"]][k].append(float(r[k]))
        if not rows:
            continue  # a file this set did not measure
        plain = rng(rows["plain"]["tokens_per_second"], "{:.0f}")
        for dr, v in rows.items():
            if dr == "plain":
                continue
            print(f"| {q} | {b} | {plain} | {dr} | {rng(v['speedup'])}x | {rng(v['tau'])} | "
                  f"{rng(v['tree_tokens'], '{:.1f}')} |")
print()
ks = [1, 2, 4, 8, 16, 64]
print("| file | binary | ms at k=1 | " + " | ".join(f"k={k} / k=1" for k in ks[1:]) + " |")
print("|---|---|---|" + "---|" * (len(ks) - 1))
for q in ("q4_k_m", "q8_0", "q4_0"):
    for b in ("base", "new"):
        ms1, cost = [], defaultdict(list)
        for path in sorted(glob.glob(f"{d}/cost-{q}-{b}.run*.txt")):
            for line in open(path):
                m = re.match(r"\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+", line)
                if m and int(m.group(1)) in ks:
                    k = int(m.group(1))
                    if k == 1:
                        ms1.append(float(m.group(2)))
                    else:
                        cost[k].append(float(m.group(3)))
        if not ms1:
            continue
        print(f"| {q} | {b} | {rng(ms1)} | " + " | ".join(rng(cost[k]) for k in ks[1:]) + " |")
