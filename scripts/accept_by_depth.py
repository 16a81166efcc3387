#!/usr/bin/env python3
"""Where a drafter's accepted paths stop, from an `eagle2 bench --json` file.

For each drafter and temperature it sums the per-prompt accepted-length histograms (entry a: the
cycles that accepted a drafted tokens, the bonus token not counted) and prints, for each depth d,
how often the accepted path reached depth d given that it reached depth d - 1. A head whose
figures fall from one depth to the next loses its drafts there: this is how docs/RESULTS.md
compares the EAGLE-2 and EAGLE-3 heads depth by depth.

Usage: scripts/accept_by_depth.py BENCH.json [--drafter SUBSTRING]
"""
import argparse
import json
import sys


def histograms(runs, name_part):
    """(drafter, temperature) -> histogram summed over prompts, in the bench's order."""
    totals = {}
    for run in runs:
        hist = run.get("accept_histogram") or []  # empty for plain decoding
        if name_part not in run["drafter"] or not any(hist):
            continue
        total = totals.setdefault((run["drafter"], float(run["temperature"])), [])
        total.extend([0] * (len(hist) - len(total)))
        for accepted, cycles in enumerate(hist):
            total[accepted] += int(cycles)
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_file")
    parser.add_argument("--drafter", default="", help="only drafters whose name contains this")
    args = parser.parse_args()
    try:
        with open(args.json_file) as f:
            totals = histograms(json.load(f)["runs"], args.drafter)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        sys.exit(f"error: {args.json_file}: not an eagle2 bench JSON file ({e!r})")

    if not totals:
        sys.exit("error: no drafter in the file has an accepted-length histogram")
    for (drafter, temperature), hist in totals.items():
        cycles = sum(hist)
        # reached[d]: cycles whose accepted path has at least d drafted tokens.
        reached = [sum(hist[d:]) for d in range(len(hist))]
        given_parent = [f"{reached[d] / reached[d - 1]:.3f}" for d in range(1, len(hist))
                        if reached[d - 1] > 0]
        tau = 1 + sum(accepted * n for accepted, n in enumerate(hist)) / cycles
        print(f"{drafter} at T = {temperature:g}: {cycles} cycles, tau {tau:.2f}")
        print(f"  cycles by accepted drafts 0..{len(hist) - 1}: {' '.join(map(str, hist))}")
        print(f"  depth reached given the one above, from depth 1: {' '.join(given_parent)}")


if __name__ == "__main__":
    main()
