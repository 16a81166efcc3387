#!/usr/bin/env python3
"""Ranges over the runs of ab.sh's cost-curve outputs, per file and binary, as Markdown: ms and
tokens/s at k = 1, cost / k=1 at every other k, and the read bandwidth cost-curve measured.
Usage: ab_ranges.py DIR BINARY_NAME...   (the basenames ab.sh put in the file names)"""
import glob, re, sys
from collections import defaultdict

d, names = sys.argv[1], sys.argv[2:]
def rng(v, f="{:.2f}"):
    return f.format(min(v)) if min(v) == max(v) else f.format(min(v)) + "-" + f.format(max(v))

table = {}
ks = set()
for q in ("q4_k_m", "q8_0", "q4_0"):
    for b in names:
        files = sorted(glob.glob(f"{d}/cost-{q}-{b}.run*.txt"))
        if not files:
            continue
        ms, cost, bw = defaultdict(list), defaultdict(list), []
        for p in files:
            for line in open(p):
                m = re.match(r"\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+", line)
                if m:
                    k = int(m.group(1))
                    ks.add(k)
                    ms[k].append(float(m.group(2)))
                    cost[k].append(float(m.group(3)))
                m = re.search(r"read bandwidth ([\d.]+) GB/s", line)
                if m:
                    bw.append(float(m.group(1)))
        table[(q, b)] = (ms, cost, bw)
ks = sorted(ks - {1})
print("| file | binary | k=1 ms (tokens/s) | " + " | ".join(f"k={k} / k=1" for k in ks) +
      " | read GB/s |")
print("|---|---|---|" + "---|" * (len(ks) + 1))
for (q, b), (ms, cost, bw) in table.items():
    tps = [1000 / x for x in ms[1]]
    print(f"| {q} | {b} | {rng(ms[1], '{:.0f}')} ({rng(tps, '{:.1f}')}) | " +
          " | ".join(rng(cost[k]) if cost[k] else "-" for k in ks) + f" | {rng(bw, '{:.1f}')} |")
print()
print("| file | binary | " + " | ".join(f"k={k} ms" for k in [1] + ks) + " |")
print("|---|---|" + "---|" * (len(ks) + 1))
for (q, b), (ms, cost, bw) in table.items():
    print(f"| {q} | {b} | " + " | ".join(rng(ms[k], '{:.0f}') if ms[k] else "-" for k in [1] + ks) + " |")
