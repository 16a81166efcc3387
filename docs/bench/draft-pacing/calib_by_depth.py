# Usage (from the repository root): python3 docs/bench/draft-pacing/calib_by_depth.py HEAD_DIR "EXTRA FLAGS" SPEC N_PROMPTS
# Runs eagle2 generate --verbose on the first N held-out code windows (128 new tokens, T = 0) and
# counts, for every drafted node whose parent was accepted, whether it was accepted, by depth and
# by its own draft probability (read off the printed values: a node's value minus its parent's).
# Acceptance by (depth, draft probability) along chains: is a head's probability calibrated alike at every depth?
import json, subprocess, sys, re, math, collections
head, extra, spec, n = sys.argv[1], sys.argv[2].split(), sys.argv[3], int(sys.argv[4])
prompts = [json.loads(l)["text"] for l in open("/tmp/eagle2-code-corpus/heldout_prompts.jsonl")][:n]
stats = collections.defaultdict(lambda: [0, 0])  # (depth, pbin) -> [seen, accepted]
sizes = collections.Counter(); acc = collections.Counter(); runs = []
for p in prompts:
    out = subprocess.run(["build/bin/eagle2", "generate", "-m", "models/code-lm", "--draft", head, *extra,
                          "--spec", spec, "-n", "128", "--ignore-eos", "--verbose", "-t", "2", "-p", p],
                         capture_output=True, text=True).stderr
    for blk in out.split("[cycle ")[1:]:
        lines = blk.split("\n")
        path = [int(x) for x in lines[1].split(":")[1].split()]
        nodes = []
        for l in lines[3:]:
            m = re.match(r"\s+(\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?[\d.]+|-?inf|nan)", l)
            if not m: break
            nodes.append((int(m.group(3)), float(m.group(4))))
        on = set(path); depth = {0: 0}
        sizes[len(nodes)] += 1; acc[(len(nodes), len(path) - 1)] += 1; runs.append(len(nodes))
        for i, (par, val) in enumerate(nodes):
            if i == 0: continue
            depth[i] = depth[par] + 1
            if par in on:
                lp = val - nodes[par][1]
                b = min(4, int(math.exp(lp) * 5))
                s = stats[(depth[i], b)]; s[0] += 1; s[1] += i in on
print("depth x p-bin [0-.2,.2-.4,.4-.6,.6-.8,.8-1]: accepted/seen")
for d in range(1, 10):
    row = []
    for b in range(5):
        s = stats.get((d, b))
        row.append(f"{s[1]/s[0]:.2f}/{s[0]:4d}" if s else "    -    ")
    print(d, "  ".join(row))

print("tree sizes:", sorted(sizes.items()))
print("root-only cycles:", sizes[1], "of", sum(sizes.values()))
# pauses: maximal runs of root-only cycles
r = 0; pauses = collections.Counter()
for x in runs + [0]:
    if x == 1: r += 1
    elif r: pauses[r] += 1; r = 0
print("root-only runs (length: count):", sorted(pauses.items()))
for t in sorted(sizes):
    print(" size", t, "accepted:", [acc[(t, a)] for a in range(t)])
