#!/usr/bin/env python3
"""EAGLE-2 head against EAGLE-3 head on the same trees, from scripts/eagle3_table.sh's runs.

Usage: scripts/eagle3_table.py [--head3 DIR] RUN1.csv [RUN2.csv ...] > OUT/table.md

RUN*.csv: `eagle2 bench --csv` of each run, where a drafter "SPEC" drafts with the EAGLE-2 head
(--draft) and "SPEC@DIR" with the EAGLE-3 head in DIR. Per temperature, one row per tree and head:
tau, speedup over plain decoding in the same run, the draft time per cycle and tokens/s, each as
"min-max" over the runs (one run's figure alone says little on a shared machine), plain decoding's
tokens/s above the table, and the EAGLE-3/EAGLE-2 tau and speedup ratios per tree (each taken
within a run, then as a range). Standard library only.
"""
import argparse
import csv
import sys

TREE_NOTES = {
    "dynamic:8:6:2": "8 tokens, published ranking, uncalibrated",
    "dynamic:8:6:2:cal": "8 tokens, calibrated",
    "dynamic:auto:8:1:cal": "auto budget, calibrated",
    "dynamic:60:5:10": "60 tokens, the paper's",
    "chain:3": "a chain of 4 drafted tokens",
    "chain:5": "a chain of 6 drafted tokens",
    "chain:6": "a chain of 7 drafted tokens",
}


def load_run(path):
    """{(drafter, temperature): row} of one run; the figures as floats."""
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["drafter"], float(r["temperature"]))
            if key in rows:
                raise SystemExit(f"{path}: {key} twice (one prompt set per run expected)")
            rows[key] = {k: float(r[k]) for k in ("tokens_per_second", "speedup", "tau",
                                                  "draft_share")}
    return rows


def draft_ms_per_cycle(row):
    # draft share of the time x seconds per token x tokens per cycle (tau).
    return 1e3 * row["draft_share"] * row["tau"] / row["tokens_per_second"]


def span(values, digits=2, suffix=""):
    lo, hi = min(values), max(values)
    if f"{lo:.{digits}f}" == f"{hi:.{digits}f}":
        return f"{lo:.{digits}f}{suffix}"
    return f"{lo:.{digits}f}-{hi:.{digits}f}{suffix}"


def table(runs, head3, temperature):
    """Markdown lines for one temperature."""
    trees = []
    for run in runs:
        for drafter, temp in run:
            tree = drafter.split("@", 1)[0]
            if temp == temperature and drafter != "plain" and tree not in trees:
                trees.append(tree)
    plain = [run[("plain", temperature)]["tokens_per_second"] for run in runs
             if ("plain", temperature) in run]
    out = [f"### T = {temperature:g}", ""]
    if plain:
        out.append(f"Plain decoding: {span(plain, 0)} tokens/s ({len(plain)} runs).")
        out.append("")
    out.append("| tree | head | τ | speedup | draft ms per cycle | tokens/s |")
    out.append("|---|---|---|---|---|---|")
    ratios = []
    for tree in trees:
        cells = {}
        for head, drafter in (("EAGLE-2", tree), ("EAGLE-3", f"{tree}@{head3}")):
            rows = [run[(drafter, temperature)] for run in runs if (drafter, temperature) in run]
            if not rows:
                continue
            cells[head] = rows
            out.append(f"| `{tree}` ({TREE_NOTES.get(tree, '')}) | {head} | "
                       f"{span([r['tau'] for r in rows])} | "
                       f"{span([r['speedup'] for r in rows], 2, 'x')} | "
                       f"{span([draft_ms_per_cycle(r) for r in rows], 3)} | "
                       f"{span([r['tokens_per_second'] for r in rows], 0)} |")
        if len(cells) == 2 and len(cells["EAGLE-2"]) == len(cells["EAGLE-3"]):
            pairs = list(zip(cells["EAGLE-2"], cells["EAGLE-3"]))
            ratios.append((tree, span([b["tau"] / a["tau"] for a, b in pairs]),
                           span([b["speedup"] / a["speedup"] for a, b in pairs])))
    if ratios:
        out += ["", "| tree | EAGLE-3 τ / EAGLE-2 τ | EAGLE-3 speedup / EAGLE-2 speedup |",
                "|---|---|---|"]
        out += [f"| `{t}` | {r}x | {s}x |" for t, r, s in ratios]
    out += best_per_run(runs, head3, temperature)
    out.append("")
    return out


def best_per_run(runs, head3, temperature):
    """Each head's fastest setting in each run (any tree), and the EAGLE-3/EAGLE-2 ratio."""
    out = ["", "| run | EAGLE-2 head's best | EAGLE-3 head's best | EAGLE-3 / EAGLE-2 |",
           "|---|---|---|---|"]
    for i, run in enumerate(runs, 1):
        best = {}
        for (drafter, temp), row in run.items():
            if temp != temperature or drafter == "plain":
                continue
            tree, _, own_head = drafter.partition("@")
            if own_head and own_head != head3:
                continue  # another head's column: neither of the two compared here
            head = "EAGLE-3" if own_head else "EAGLE-2"
            if head not in best or row["speedup"] > best[head][1]:
                best[head] = (tree, row["speedup"])
        if len(best) == 2:
            (t2, s2), (t3, s3) = best["EAGLE-2"], best["EAGLE-3"]
            out.append(f"| {i} | {s2:.2f}x (`{t2}`) | {s3:.2f}x (`{t3}`) | {s3 / s2:.2f}x |")
    return out if len(out) > 3 else []


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--head3", default="models/code-lm-eagle3")
    p.add_argument("runs", nargs="+")
    a = p.parse_args(argv)
    runs = [load_run(path) for path in a.runs]
    temps = sorted({t for run in runs for _, t in run})
    lines = [f"## EAGLE-2 head vs EAGLE-3 head ({len(runs)} runs)", ""]
    for t in temps:
        lines += table(runs, a.head3, t)
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
