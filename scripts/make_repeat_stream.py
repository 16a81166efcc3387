#!/usr/bin/env python3
"""A repeated-request stream for the server-wide suffix index (issue 45, item 4), built
deterministically from prompt sets the repository already has.

Agents send the same request again: a retried tool call, a re-planned step, the same file asked
for twice. A server that indexes what it generated for earlier requests (`eagle2 serve
--suffix-scope server`) drafts the repeat's answer from the first one's output; a request-only
index has only the repeat's own prompt.

The stream: DISTINCT prompts taken alternately from the inputs (each input's first prompts, in
order; an input with fewer gives what it has), sent once in that order, then REPEATS - 1 more
times, each round in its own fixed shuffle (random.Random(45 + round)), so that a repeat's
original is between 1 and 2 * DISTINCT - 1 requests earlier. One JSON line per request: the
prompt under "prompt" (eagle2 bench and bench-serve read it like HumanEval), its distinct
prompt's number under "distinct" and its round under "round" (0: first time). `eagle2
bench-serve --in-order` replays it in this order.

Usage:
  python3 scripts/make_repeat_stream.py OUT.jsonl INPUT.jsonl[.gz] [INPUT ...]
      [--distinct 16] [--repeats 2]
The shipped bench/prompts/repeated_requests.jsonl is
  python3 scripts/make_repeat_stream.py bench/prompts/repeated_requests.jsonl \
      bench/prompts/code_edits.jsonl ../shared/data/prompts/HumanEval.jsonl.gz
"""
import argparse
import gzip
import json
import random
import sys

KEYS = ("turns", "prompt", "question", "text")  # what eagle2's prompt-set reader looks for


def prompts_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            j = json.loads(line)
            key = next((k for k in KEYS if k in j), None)
            if key is None:
                continue
            v = j[key]
            out.append(v[0] if isinstance(v, list) else v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--distinct", type=int, default=16, help="distinct prompts in the stream")
    ap.add_argument("--repeats", type=int, default=2, help="times each is sent")
    a = ap.parse_args()
    if a.distinct < 1 or a.repeats < 1:
        sys.exit("error: --distinct and --repeats must be >= 1")
    sources = [prompts_of(p) for p in a.inputs]
    distinct, taken = [], [0] * len(sources)
    while len(distinct) < a.distinct and any(t < len(s) for t, s in zip(taken, sources)):
        for i, s in enumerate(sources):
            if len(distinct) < a.distinct and taken[i] < len(s):
                distinct.append(s[taken[i]])
                taken[i] += 1
    if not distinct:
        sys.exit("error: the inputs hold no prompts")
    with open(a.out, "w", encoding="utf-8") as out:
        for rnd in range(a.repeats):
            order = list(range(len(distinct)))
            if rnd > 0:
                random.Random(45 + rnd).shuffle(order)
            for d in order:
                out.write(json.dumps({"prompt": distinct[d], "distinct": d, "round": rnd}) + "\n")
    print(f"{len(distinct) * a.repeats} requests ({len(distinct)} distinct x {a.repeats}) "
          f"-> {a.out}")


if __name__ == "__main__":
    main()
