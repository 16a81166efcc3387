#!/usr/bin/env python3
"""The EAGLE-2 paper's table on this engine, from scripts/paper_table.sh's runs, in Markdown.

Usage: scripts/paper_table.py [--methods METHODS.tsv] [--in-domain SET,SET]
                              [--prompt-notes FILE] RUN1.csv [RUN2.csv ...] > OUT/table.md

RUN*.csv: `eagle2 bench --csv` of each run (one row per prompt set x drafter x temperature; the
speedup against plain decoding in the same interleaved run). METHODS.tsv: the method rows
(scripts/paper_methods.py's, with the statuses paper_table.sh found; default: its built-in
list). The sets named by --in-domain (default: the code corpus's held-out windows and HumanEval)
are in-domain for the code model, every other set out-of-domain.

As in the paper, a group's figure is the mean over its prompt sets (the paper's "Mean" column),
taken within each run; the table shows it as "min-max" over the runs, since timings on a shared
machine move between runs and one run's figure alone says little. No speedup without the plain
tokens/s it is relative to: each table's first row gives plain decoding's. Below: every set's
figures, then the published GPU figures (scripts/paper_figures.py), labelled as not ours.

Also the loader for scripts/paper_charts.py (standard library only, as all three are).
"""
import argparse
import csv
import os
import statistics
import sys

import paper_figures
import paper_methods

IN_DOMAIN = ("heldout_prompts", "HumanEval")
SET_LABELS = {
    "heldout_prompts": "held-out code",
    "HumanEval": "HumanEval",
    "mt_bench_question": "MT-bench",
    "gsm8k_question": "GSM8K",
    "alpaca_question": "Alpaca",
    "sum_question": "CNN/DM",
    "qa_question": "Natural Questions",
}
GROUPS = ("in-domain", "out-of-domain")


def set_label(name):
    return SET_LABELS.get(name, name)


class Runs:
    """The runs' CSV rows: value(run, set, temperature, drafter, key) and the group means."""

    def __init__(self, paths, in_domain=IN_DOMAIN):
        self.paths = list(paths)
        self.rows = []  # per run: (set, temperature, drafter) -> {column: float}
        self.sets, self.temps, self.drafters = [], [], []
        for path in self.paths:
            run = {}
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    try:
                        temp = float(row["temperature"])
                        values = {k: float(row[k]) for k in
                                  ("speedup", "tau", "tokens_per_second", "tree_tokens", "runs",
                                   "draft_share", "verify_share")}
                    except (KeyError, TypeError, ValueError):
                        sys.exit(f"error: {path}: not a `eagle2 bench --csv` file")
                    run[(row["prompt_set"], temp, row["drafter"])] = values
                    for seq, v in ((self.sets, row["prompt_set"]), (self.temps, temp),
                                   (self.drafters, row["drafter"])):
                        if v not in seq:
                            seq.append(v)
            self.rows.append(run)
        self.temps.sort()
        in_domain = [s for s in in_domain if s in self.sets]
        self.groups = {"in-domain": in_domain,
                       "out-of-domain": [s for s in self.sets if s not in in_domain]}
        # In-domain sets first, in --in-domain's order, then the others as the runs list them.
        self.sets = self.groups["in-domain"] + self.groups["out-of-domain"]

    def per_run(self, sets, temp, drafter, key):
        """The mean of `key` over `sets` within each run (runs without any of them left out)."""
        out = []
        for run in self.rows:
            values = [run[(s, temp, drafter)][key] for s in sets if (s, temp, drafter) in run]
            if values:
                out.append(statistics.fmean(values))
        return out

    def group(self, group, temp, drafter, key):
        return self.per_run(self.groups[group], temp, drafter, key)


def span(values, fmt):
    if not values:
        return "?"
    a, b = fmt.format(min(values)), fmt.format(max(values))
    return a if a == b else a + "-" + b


def method_rows(runs, methods):
    """(method, spec, setting, status) for every row: the given ones, then any drafter the runs
    have that they do not name. A row to run that has no figures says so."""
    out = []
    for method, spec, setting, status in methods:
        if not status and spec not in runs.drafters:
            status = "not run: no rows in the CSVs"
        out.append((method, spec, setting, status))
    named = {m[1] for m in methods}
    out += [(d, d, "", "") for d in runs.drafters if d not in named]
    return out


def temp_label(t):
    return f"T = {t:g}"


def cell(text):
    """Text for a Markdown table cell: a '|' (static[:N|:JSON] in an error) would end the cell."""
    return text.replace("|", "\\|")


def drafter_cell(spec, setting):
    return cell(f"`{spec}`" + (f" ({setting})" if setting else ""))


def main_table(runs, rows):
    cols = [(t, g) for t in runs.temps for g in GROUPS if runs.groups[g]]
    head = "| method | drafter |" + "".join(
        f" {g}, {temp_label(t)}: speedup | τ |" for t, g in cols)
    lines = [head, "|---|---|" + "---|---|" * len(cols)]
    lines.append("| plain decoding: tokens/s | `plain` |" + "".join(
        f" {span(runs.group(g, t, 'plain', 'tokens_per_second'), '{:.0f}')} tok/s | |"
        for t, g in cols))
    for method, spec, setting, status in rows:
        if spec == "plain":
            continue
        cells = ([cell(status)] + [""] * (2 * len(cols) - 1) if status else
                 [c for t, g in cols for c in
                  (span(runs.group(g, t, spec, "speedup"), "{:.2f}") + "x",
                   span(runs.group(g, t, spec, "tau"), "{:.2f}"))])
        lines.append(f"| {cell(method)} | {drafter_cell(spec, setting)} | " + " | ".join(cells)
                     + " |")
    return "\n".join(lines) + "\n"


def set_table(runs, rows, temp):
    sets = runs.sets
    lines = [f"**Every prompt set, {temp_label(temp)}**: speedup / τ\n",
             "| method | drafter | " + " | ".join(
                 set_label(s) + (" (in-domain)" if s in runs.groups["in-domain"] else "")
                 for s in sets) + " |",
             "|---|---|" + "---|" * len(sets),
             "| plain decoding: tokens/s | `plain` | " + " | ".join(
                 span(runs.per_run([s], temp, "plain", "tokens_per_second"), "{:.0f}")
                 for s in sets) + " |"]
    for method, spec, setting, status in rows:
        if spec == "plain" or status:
            continue
        cells = [span(runs.per_run([s], temp, spec, "speedup"), "{:.2f}") + "x / " +
                 span(runs.per_run([s], temp, spec, "tau"), "{:.2f}") for s in sets]
        lines.append(f"| {cell(method)} | {drafter_cell(spec, '')} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def cycle_costs(run, sets, temp, drafter):
    """Within one run, the means over `sets` of: rows verified per cycle, ms drafting and ms
    verifying per cycle, ms drafting per drafted token. A cycle commits tau tokens, so it lasts
    tau / tokens_per_second; the bench's draft and verify shares split that time."""
    per_set = []
    for s in sets:
        v = run.get((s, temp, drafter))
        if not v or v["tokens_per_second"] <= 0:
            continue
        cycle_ms = 1000.0 * v["tau"] / v["tokens_per_second"]
        drafted = v["tree_tokens"] - 1
        per_set.append((v["tree_tokens"], v["draft_share"] * cycle_ms,
                        v["verify_share"] * cycle_ms,
                        v["draft_share"] * cycle_ms / drafted if drafted > 0 else None))
    if not per_set:
        return None
    means = [statistics.fmean(x[i] for x in per_set) for i in range(3)]
    per_token = [x[3] for x in per_set if x[3] is not None]
    return means + [statistics.fmean(per_token) if per_token else None]


def cost_table(runs, rows, temp):
    """Where a cycle's time goes, every prompt set pooled: what the speedup is made of besides
    tau (the main table's) -- the size of the tree the target verifies and what drafting it costs."""
    sets = runs.sets
    lines = [f"**Where a cycle's time goes, {temp_label(temp)}** (every prompt set; min-max over "
             "the runs of each run's mean): rows the target verifies per cycle (root included), "
             "milliseconds drafting and verifying per cycle, and drafting per drafted token; plain "
             "decoding's ms per token is the scale.\n",
             "| method | drafter | rows verified | draft ms / cycle | verify ms / cycle "
             "| draft ms / drafted token |",
             "|---|---|---|---|---|---|"]
    plain = [1000.0 / statistics.fmean(r[(s, temp, "plain")]["tokens_per_second"]
                                       for s in sets if (s, temp, "plain") in r)
             for r in runs.rows if any((s, temp, "plain") in r for s in sets)]
    lines.append(f"| plain decoding | `plain` | 1 | 0 | {span(plain, '{:.2f}')} (ms per token) | |")
    for method, spec, setting, status in rows:
        if spec == "plain" or status:
            continue
        costs = [c for c in (cycle_costs(r, sets, temp, spec) for r in runs.rows) if c]
        if not costs:
            continue
        per_token = [c[3] for c in costs if c[3] is not None]
        lines.append(f"| {cell(method)} | {drafter_cell(spec, '')} | "
                     f"{span([c[0] for c in costs], '{:.1f}')} | "
                     f"{span([c[1] for c in costs], '{:.2f}')} | "
                     f"{span([c[2] for c in costs], '{:.2f}')} | "
                     f"{span(per_token, '{:.3f}') if per_token else '—'} |")
    return "\n".join(lines) + "\n"


def markdown(runs, rows, prompt_notes=()):
    n = len(runs.paths)
    names = ", ".join(os.path.basename(p) for p in runs.paths)
    groups = "; ".join(f"{g}: " + ", ".join(set_label(s) for s in runs.groups[g])
                       for g in GROUPS if runs.groups[g])
    prompts_per_set = {s: span(runs.per_run([s], runs.temps[0], "plain", "runs"), "{:.0f}")
                       for s in runs.sets} if runs.temps else {}
    out = [f"Ranges over {n} run{'s' if n != 1 else ''} ({names}). Each figure is the mean over "
           "the group's prompt sets within one run (the paper's \"Mean\"), shown as min-max over "
           "the runs; speedups are against plain decoding in the same interleaved run, whose "
           "tokens/s (likewise the group's mean) is the first row.\n",
           f"Prompt sets: {groups}.\n"]
    if prompts_per_set:
        out.append("Prompts per set: " + ", ".join(
            f"{set_label(s)} {c}" for s, c in prompts_per_set.items()) + ".\n")
    if prompt_notes:
        out.append("Prompt files:\n\n" + "\n".join(f"- {line}" for line in prompt_notes) + "\n")
    out.append(main_table(runs, rows))
    for t in runs.temps:
        out.append(set_table(runs, rows, t))
    for t in runs.temps:
        out.append(cost_table(runs, rows, t))
    # Each method once, in the table's order.
    out.append(paper_figures.markdown(list(dict.fromkeys(
        m for m, spec, _, _ in rows if spec != "plain"))))
    return "\n".join(out)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--methods", help="METHODS.tsv (default: scripts/paper_methods.py's list)")
    p.add_argument("--in-domain", default=",".join(IN_DOMAIN))
    p.add_argument("--prompt-notes", help="lines about the prompt files, listed above the table")
    p.add_argument("csv", nargs="+")
    return p.parse_args(argv)


def load(a):
    runs = Runs(a.csv, [s for s in a.in_domain.split(",") if s])
    methods = (paper_methods.read_tsv(a.methods) if a.methods else
               [(m, spec, setting, "") for m, spec, setting in paper_methods.METHODS])
    return runs, method_rows(runs, methods)


def main(argv):
    a = parse_args(argv)
    runs, rows = load(a)
    notes = []
    if a.prompt_notes:
        with open(a.prompt_notes) as f:
            notes = [line.rstrip("\n") for line in f if line.strip()]
    sys.stdout.write(markdown(runs, rows, notes))


if __name__ == "__main__":
    main(sys.argv[1:])
