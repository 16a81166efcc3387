#!/usr/bin/env python3
"""The methods of scripts/paper_table.sh: which drafter spec stands for which method of the EAGLE-2
paper's table, in one place (the script, the table and the charts all read it from here).

Usage: scripts/paper_methods.py > OUT/methods.tsv

Prints one line per method row, tab-separated: method, drafter spec, setting, status. The status
is empty for a row to run, or "not run: WHY" for a drafter whose folder is missing (a Medusa or
Hydra folder not bundled yet, the EAGLE head), so that the benchmark runs with whatever is
bundled and the table still says what is missing. Run from the repository root (the folders in
the specs are relative to it).

Environment:
  DRAFTERS  replaces the default list: entries separated by ';', newlines or commas (commas inside
            [...] belong to a static tree's JSON), each METHOD=SPEC or a bare SPEC (then the
            method is the default list's for that spec, else the spec itself).
  HEAD      the EAGLE head the chain/static/dynamic drafters need (default models/code-lm-eagle).
"""
import os
import sys

# (method, spec, setting). The method names are the paper's; where a method has two rows, one is
# the paper's setting (sized for a GPU) and one this CPU's (a 2-core machine verifies a wide tree at
# a high cost, so its best trees are small). The ablation runs at the paper's setting and at 16
# tokens, beside the full EAGLE-2 at 16 tokens.
METHODS = [
    ("plain decoding", "plain", "the baseline"),
    ("SpS", "sps:models/code-lm-draft", "a separate draft model"),
    ("PLD", "lookup", "prompt lookup"),
    ("Lookahead", "lookahead:15:5:15", "the paper's W, N, G"),
    # 2:3:2 is the branch's measured best for this CPU (at most 8 verified rows; tau on HumanEval).
    ("Lookahead", "lookahead:2:3:2", "sized for this CPU"),
    ("Medusa", "medusa:models/code-lm-medusa", "Medusa heads"),
    ("Hydra", "hydra:models/code-lm-hydra", "Hydra heads"),
    ("EAGLE-1", "static", "EAGLE-1's tree"),
    ("EAGLE-1", "static:8", "EAGLE-1's tree pruned to 8 tokens"),
    ("EAGLE-2", "dynamic:60:5:10", "the paper's setting, 60 tokens"),
    ("EAGLE-2", "dynamic:auto:8:1:cal", "this CPU's: auto budget, calibrated"),
    ("EAGLE-2", "dynamic:16:6:2", "16 tokens, the ablation's reference"),
    ("EAGLE-2 w/o value", "dynamic:60:5:10:novalue", "the paper's setting"),
    ("EAGLE-2 w/o value", "dynamic:16:6:2:novalue", "16 tokens"),
    ("EAGLE-2 w/o reranking", "dynamic:60:5:10:norerank", "the paper's setting"),
    ("EAGLE-2 w/o reranking", "dynamic:16:6:2:norerank", "16 tokens"),
]

# Drafter kinds that draft with the EAGLE head (bench --draft); --draft-vocab applies to it only.
HEAD_KINDS = ("chain", "static", "dynamic")
# Kinds whose spec names a folder of their own weights, and how many numbers may follow it
# (sps:DIR[:D[:K]], medusa:DIR[:T], hydra:DIR[:T]: the engine reads the numbers from the right).
FOLDER_KINDS = {"sps": 2, "medusa": 1, "hydra": 1}


def split_entries(text):
    """DRAFTERS entries: split on ';', newlines and commas outside brackets."""
    out, cur, depth = [], "", 0
    for c in text:
        if c in ";\n" or (c == "," and depth == 0):
            out.append(cur)
            cur = ""
            continue
        depth += 1 if c == "[" else -1 if c == "]" else 0
        cur += c
    out.append(cur)
    return [e.strip() for e in out if e.strip()]


def methods_from(text):
    """(method, spec, setting) rows of a DRAFTERS value, plain first (every speedup needs it)."""
    known = {spec: (method, setting) for method, spec, setting in METHODS}
    rows = []
    for entry in split_entries(text):
        if "=" in entry:
            method, spec = (s.strip() for s in entry.split("=", 1))
            setting = known.get(spec, (None, ""))[1]
        else:
            spec = entry
            method, setting = known.get(spec, (spec, ""))
        if not method or not spec:
            sys.exit(f"error: DRAFTERS: '{entry}' is not METHOD=SPEC or SPEC")
        if "\t" in method + spec:
            sys.exit(f"error: DRAFTERS: '{entry}' has a tab")
        if any(spec == r[1] for r in rows):
            sys.exit(f"error: DRAFTERS: '{spec}' twice (bench names its rows by the spec)")
        rows.append((method, spec, setting))
    if not any(spec == "plain" for _, spec, _ in rows):
        rows.insert(0, METHODS[0])
    return rows


def folder_of(spec):
    """The weights folder a spec names (None for drafters without one)."""
    kind, _, rest = spec.partition(":")
    if kind not in FOLDER_KINDS:
        return None
    parts = rest.split(":")
    for _ in range(FOLDER_KINDS[kind]):
        if len(parts) > 1 and parts[-1].isdigit():
            parts.pop()
    return ":".join(parts)


def status_of(spec, head):
    folder = folder_of(spec)
    if folder is not None and not os.path.isdir(folder):
        return f"not run: {folder} not found"
    if spec.partition(":")[0] in HEAD_KINDS and not os.path.isdir(head):
        return f"not run: the EAGLE head {head} not found"
    return ""


def plan(env):
    rows = methods_from(env["DRAFTERS"]) if env.get("DRAFTERS", "").strip() else METHODS
    head = env.get("HEAD") or "models/code-lm-eagle"
    return [(m, spec, setting, status_of(spec, head)) for m, spec, setting in rows]


def read_tsv(path):
    """The rows paper_table.sh wrote (this module's output, statuses updated by its check)."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                method, spec, setting, status = (line.split("\t") + ["", "", ""])[:4]
                rows.append((method, spec, setting, status))
    return rows


def main():
    for row in plan(os.environ):
        print("\t".join(row))


if __name__ == "__main__":
    main()
