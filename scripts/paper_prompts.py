#!/usr/bin/env python3
"""The prompt sets of scripts/paper_table.sh, made to fit one bench run.

Usage: scripts/paper_prompts.py --eagle2 BIN --model DIR --tokens N OUT_DIR LIMIT:FILE ...

Writes OUT_DIR/<stem>.jsonl for every FILE (JSONL, .gz too, the prompt read as `eagle2 bench`
reads it: the first of "turns" (first turn), "prompt", "question", "text"): its first LIMIT
prompts, each as {"turns": [TEXT]}. The stem stays the file's, so bench names the set as it would
have named the original. Why a copy: bench takes one --limit for all sets (the in-domain and
out-of-domain sets have their own), and one --ctx, which a whole CNN/DM article does not fit with
the code model's 1024 positions; a prompt over N tokens (BOS included, the model's own tokenizer
through `eagle2 tokenize`) is cut to its first N tokens. Prints one line per set saying how many
prompts it kept and cut; paper_table.py puts these lines under the table.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys

KEYS = ("turns", "prompt", "question", "text")


def read_prompts(path):
    opener = gzip.open if path.endswith(".gz") else open
    plain = path[:-3] if path.endswith(".gz") else path
    if not plain.endswith((".jsonl", ".json")):
        sys.exit(f"error: {path}: expected a JSONL prompt set")
    prompts = []
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                j = json.loads(line)
            except json.JSONDecodeError:
                sys.exit(f"error: {path}:{n}: not valid JSON")
            for key in KEYS:
                if key in j:
                    v = j[key]
                    text = v if isinstance(v, str) else v[0] if isinstance(v, list) and v else None
                    if not isinstance(text, str):
                        sys.exit(f"error: {path}:{n}: field '{key}' is not a string or a list of "
                                 "strings")
                    prompts.append(text)
                    break
            else:
                sys.exit(f"error: {path}:{n}: no 'turns', 'prompt', 'question' or 'text' field")
    return prompts


class Tokens:
    """The model's tokenizer through `eagle2 tokenize` (the exact tokens bench will see)."""

    def __init__(self, binary, model):
        self.binary, self.model = binary, model

    def _run(self, *args):
        r = subprocess.run([self.binary, "tokenize", "-m", self.model, *args], capture_output=True)
        if r.returncode != 0:
            sys.exit("error: eagle2 tokenize failed: " + r.stderr.decode(errors="replace").strip())
        return r.stdout

    def encode(self, text):  # without BOS
        line = self._run("--no-bos", "--prompt=" + text).decode().strip()
        return line.split(",") if line else []

    def decode(self, ids):
        # A cut can split a character's bytes: the partial character is dropped.
        return self._run("--decode", ",".join(ids)).decode("utf-8", errors="ignore")


def cut(tokens, text, budget):
    """The text of the prompt's first tokens, so that BOS + the text is at most `budget` tokens
    (decoding then encoding again can merge differently, hence the check)."""
    ids = tokens.encode(text)
    if len(ids) + 1 <= budget:
        return text, False
    keep = budget - 1
    while keep > 0:
        short = tokens.decode(ids[:keep])
        if len(tokens.encode(short)) + 1 <= budget:
            return short, True
        keep -= 4
    sys.exit(f"error: cannot cut a prompt to {budget} tokens")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--eagle2", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("out")
    p.add_argument("sets", nargs="+", metavar="LIMIT:FILE")
    a = p.parse_args(argv)
    if a.tokens < 2:
        sys.exit("error: --tokens must be at least 2")
    tokens = Tokens(a.eagle2, a.model)
    os.makedirs(a.out, exist_ok=True)
    for item in a.sets:
        limit, sep, path = item.partition(":")
        if not sep or not limit.isdigit() or int(limit) < 1:
            sys.exit(f"error: '{item}' is not LIMIT:FILE with LIMIT >= 1")
        prompts = read_prompts(path)[:int(limit)]
        if not prompts:
            sys.exit(f"error: {path}: no prompts found")
        stem = os.path.basename(path).split(".")[0]
        done = [cut(tokens, text, a.tokens) for text in prompts]
        with open(os.path.join(a.out, stem + ".jsonl"), "w", encoding="utf-8") as f:
            for text, _ in done:
                f.write(json.dumps({"turns": [text]}, ensure_ascii=False) + "\n")
        n_cut = sum(c for _, c in done)
        print(f"{stem}: the first {len(done)} prompt{'s' if len(done) != 1 else ''} of {path}"
              + (f", {n_cut} cut to their first {a.tokens} tokens" if n_cut else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
