# Per-repetition ranges of an eagle2 bench --json file: for each temperature and drafter, the
# tokens/s of each repetition (all prompts), its ratio to plain in the same repetition, and new
# tokens per cycle. Usage: python3 ranges.py RUN.json
import json, sys, collections
d = json.load(open(sys.argv[1]))
agg = collections.defaultdict(lambda: [0, 0.0, 0, 0])  # tokens, seconds, cycles
for r in d['runs']:
    k = (round(r['temperature'], 2), r['drafter'], r['rep'])
    a = agg[k]; a[0] += r['new_tokens']; a[1] += r['decode_seconds']; a[2] += r['cycles']
temps = sorted({k[0] for k in agg}); drafters = []
for r in d['runs']:
    if r['drafter'] not in drafters: drafters.append(r['drafter'])
reps = sorted({k[2] for k in agg})
print("| T | drafter | tokens/s (per rep) | speedup vs plain, same rep | tau |")
print("|---|---|---|---|---|")
for t in temps:
    for dr in drafters:
        tps = [agg[(t, dr, i)][0] / agg[(t, dr, i)][1] for i in reps]
        sp = [agg[(t, dr, i)][0] / agg[(t, dr, i)][1] / (agg[(t, 'plain', i)][0] / agg[(t, 'plain', i)][1]) for i in reps]
        tau = [agg[(t, dr, i)][0] / agg[(t, dr, i)][2] for i in reps]
        print(f"| {t} | `{dr}` | {min(tps):.1f}-{max(tps):.1f} | {min(sp):.2f}-{max(sp):.2f}x | {min(tau):.2f}-{max(tau):.2f} |")
