#!/usr/bin/env python3
"""The charts of scripts/paper_table.sh, as self-contained SVG (standard library only).

Usage: scripts/paper_charts.py OUT_DIR [--methods METHODS.tsv] [--in-domain SET,SET]
                               RUN1.csv [RUN2.csv ...]

Per temperature T: OUT_DIR/speedup.svg and OUT_DIR/tau.svg for T = 0, speedup_tN.svg and
tau_tN.svg for T = N: one group of bars per method row, one bar for the in-domain and one for the
out-of-domain sets, each the group's mean over its prompt sets within a run (as in the table),
drawn as the median over the runs with min-max whiskers; plain decoding's tokens/s in the legend.
A method row that did not run keeps its place on the axis, marked "not run". Same arguments and
figures as scripts/paper_table.py; drawn by scripts/svg_plot.py, in the bench's chart style.
"""
import os
import statistics
import sys

import paper_table
from svg_plot import bar_chart

NL = "\n"  # a group label's two lines: the method, then its spec
METRICS = (("speedup", "Speedup over plain decoding", "speedup (x)", "x"),
           ("tau", "Tokens per target forward (τ)", "τ (tokens per cycle)", ""))


def chart(runs, rows, temp, key, title, y_label, unit):
    groups = [g for g in paper_table.GROUPS if runs.groups[g]]
    labels, stats, notes = [], {}, {}
    for method, spec, _, status in rows:
        if spec == "plain":
            continue
        label = method + NL + spec
        labels.append(label)
        if status:
            notes[label] = "not run"
            continue
        for si, g in enumerate(groups):
            v = runs.group(g, temp, spec, key)
            if v:
                stats[(si, label)] = (statistics.median(v), min(v), max(v))
    legend = []
    for g in groups:
        rates = runs.group(g, temp, "plain", "tokens_per_second")
        legend.append(f"{g} (plain {statistics.median(rates):.0f} tok/s)" if rates else g)
    return bar_chart(
        f"{title}, {paper_table.temp_label(temp)} (mean over each group's prompt sets)",
        y_label, labels, legend, stats,
        lambda label, si, m, a, b:
            f"{label.replace(NL, ' ')}, {groups[si]}: {m:.2f}{unit} ({a:.2f}-{b:.2f})",
        notes, legend_width=240, vertical_labels=True)


def main(argv):
    if not argv:
        sys.exit("usage: paper_charts.py OUT_DIR [--methods FILE] [--in-domain SETS] RUN.csv ...")
    out = argv[0]
    a = paper_table.parse_args(argv[1:])
    runs, rows = paper_table.load(a)
    os.makedirs(out, exist_ok=True)
    for temp in runs.temps:
        suffix = "" if temp == 0 else f"_t{temp:g}".replace(".", "_")
        for key, title, y_label, unit in METRICS:
            path = os.path.join(out, f"{key}{suffix}.svg")
            with open(path, "w") as f:
                f.write(chart(runs, rows, temp, key, title, y_label, unit))
            print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
