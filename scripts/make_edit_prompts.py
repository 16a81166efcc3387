#!/usr/bin/env python3
"""Multi-turn code-edit prompts for suffix decoding (issue 45, item 4), built deterministically.

Each request repeats a file window and its earlier revisions, then asks for the next revision, as
an agent editing code does; the model's answer largely repeats text it has seen, which is where
drafting from the prompt and the output (suffix, lookup) pays. The edits are mechanical:

  version 2: rename  -- the most frequent name the window defines (def, class, parameter or
                        assignment target; >= 3 characters, not a keyword or builtin) gets the
                        suffix "_new" everywhere (whole words)
  version 3: insert  -- a comment line after the window's middle line, indented like its next
                        non-blank line
  version 4: reorder -- the first two adjacent non-blank lines of equal indentation (after the
                        first two lines, neither opening a block) are swapped

Request k (k = 1, 2, 3) holds versions 1..k, each under a header comment naming its edit, and ends
with the header of version k + 1, so the model writes that revision. One JSON line per request with
the prompt under "prompt" (eagle2 bench --prompts reads it like HumanEval), requests of one file
together, in sorted file order.

Input: the held-out files of the bundled code model's corpus (OUT/heldout/*.py of
scripts/make_code_corpus.sh), not seen in training. Usage:
  python3 scripts/make_edit_prompts.py CORPUS_DIR/heldout OUT.jsonl [--files 8] [--lines 8]
"""
import argparse
import builtins
import json
import keyword
import pathlib
import re
import sys
from collections import Counter

IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
SKIP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls"}


def window(lines, size):
    """The first `size` lines from the first top-level def or class (else the file's start)."""
    start = next((i for i, l in enumerate(lines) if re.match(r"(def|class) ", l)), 0)
    return lines[start:start + size]


def indent(line):
    return len(line) - len(line.lstrip(" "))


def rename(lines):
    # Names the window defines (def, class, parameters, assignment targets), so that the rename is
    # an edit of the code and not of prose in a docstring.
    defined = set()
    for l in lines:
        m = re.match(r"\s*(?:def|class)\s+([A-Za-z_]\w*)\s*\(?([^)]*)", l)
        if m:
            defined.add(m.group(1))
            defined.update(p.split("=")[0].strip(" *") for p in m.group(2).split(","))
        m = re.match(r"\s*([A-Za-z_]\w*)\s*=[^=]", l)
        if m:
            defined.add(m.group(1))
    words = Counter(w for l in lines for w in IDENT.findall(l)
                    if w in defined and len(w) >= 3 and w not in SKIP and not w.startswith("__"))
    if not words:
        return None
    # Most frequent, ties by the name itself: deterministic.
    name = min(words.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    new = name + "_new"
    pattern = re.compile(r"\b" + re.escape(name) + r"\b")
    return [pattern.sub(new, l) for l in lines], f"rename `{name}` to `{new}`"


def insert(lines):
    at = len(lines) // 2
    nxt = next((l for l in lines[at + 1:] if l.strip()), lines[at])
    added = " " * indent(nxt) + "# edited: checked by review"
    return lines[:at + 1] + [added] + lines[at + 1:], f"insert a comment after line {at + 1}"


def reorder(lines):
    for i in range(2, len(lines) - 1):
        a, b = lines[i], lines[i + 1]
        if (a.strip() and b.strip() and indent(a) == indent(b) and not a.rstrip().endswith(":")
                and not b.rstrip().endswith(":")):
            return (lines[:i] + [b, a] + lines[i + 2:],
                    f"swap lines {i + 1} and {i + 2}")
    return None


def requests(path, size):
    text = path.read_text(encoding="utf-8", errors="replace")
    v1 = window(text.splitlines(), size)
    if sum(1 for l in v1 if l.strip()) < 6:
        return []
    versions = [(v1, "original")]
    for edit in (rename, insert, reorder):
        made = edit(versions[-1][0])
        if made is None:
            return []
        versions.append(made)
    out = []
    for k in range(1, 4):
        parts = [f"# file: {path.name}\n"]
        for n, (body, what) in enumerate(versions[:k], start=1):
            parts.append(f"# --- version {n}: {what} ---\n" + "\n".join(body) + "\n")
        parts.append(f"# --- version {k + 1}: {versions[k][1]} ---\n")
        out.append("".join(parts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("heldout_dir")
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=8, help="files used (3 requests each)")
    ap.add_argument("--lines", type=int, default=8, help="lines per file window")
    a = ap.parse_args()
    files = sorted(pathlib.Path(a.heldout_dir).glob("*.py"))
    if not files:
        sys.exit(f"error: no .py files in {a.heldout_dir} (scripts/make_code_corpus.sh OUT: OUT/heldout)")
    prompts, used = [], 0
    for f in files:
        if used == a.files:
            break
        made = requests(f, a.lines)
        if made:
            prompts += made
            used += 1
    with open(a.out, "w", encoding="utf-8") as out:
        for p in prompts:
            out.write(json.dumps({"prompt": p}) + "\n")
    print(f"{len(prompts)} prompts from {used} files -> {a.out}")


if __name__ == "__main__":
    main()
