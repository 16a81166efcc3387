#!/usr/bin/env python3
"""The two charts of scripts/bench_quantized.sh, as self-contained SVG (standard library only).

Usage: scripts/quantized_charts.py OUT_DIR FILE [FILE ...]

Writes OUT_DIR/cost_curve.svg (verify cost relative to k = 1 against k, log2 x axis, one line per
quantization) and OUT_DIR/speedup.svg (speedup per drafter, grouped by quantization: the median over
the runs, min-max whiskers, plain decoding's tokens/s in the legend). The drawing (the look of
src/report/svg_chart.cpp, the bench's own charts) is scripts/svg_plot.py's.
"""
import math
import os
import statistics
import sys

from quantized_ranges import column, load
from svg_plot import Svg, bar_chart, color, nice_ticks


def cost_chart(data):
    """Verify cost relative to one token against k: the median per k, min-max as a whisker."""
    svg = Svg(760, 440, "Verify cost of k tokens relative to one (context 256)",
              (64, 760 - 150, 44, 440 - 64))
    ks = sorted({k for cost, _ in data.values() for k in cost})
    values = [v for cost, _ in data.values() for p in cost.values() for v in p["relative"]]
    svg.y_axis(nice_ticks(0, max(values) if values else 1),
               "forward time for k tokens / for 1 token")
    if not ks:
        svg.no_data()
        svg.legend(list(data))
        return svg.text()
    # log2 axis: the ks double, so equal steps between them.
    lo, hi = math.log2(ks[0]), math.log2(ks[-1])
    if hi - lo < 1e-12:
        lo, hi = lo - 1, hi + 1
    xmap = lambda k: svg.x0 + (math.log2(k) - lo) / (hi - lo) * (svg.x1 - svg.x0)
    for k in ks:
        x = xmap(k)
        svg.add(f'<line x1="{x:.1f}" y1="{svg.y1:.1f}" x2="{x:.1f}" y2="{svg.y1 + 4:.1f}" '
                f'stroke="black"/>')
        svg.add(f'<text x="{x:.1f}" y="{svg.y1 + 16:.1f}" text-anchor="middle">{k}</text>')
    svg.add(f'<line x1="{svg.x0:.1f}" y1="{svg.y1:.1f}" x2="{svg.x1:.1f}" y2="{svg.y1:.1f}" '
            f'stroke="black"/>')
    svg.add(f'<text x="{(svg.x0 + svg.x1) / 2:.1f}" y="{svg.y1 + 40:.1f}" text-anchor="middle">'
            'tokens verified in one forward, k (log2 scale; median over runs, min-max bars)'
            '</text>')
    for i, (name, (cost, _)) in enumerate(data.items()):
        points = [(k, statistics.median(p["relative"]), min(p["relative"]), max(p["relative"]))
                  for k, p in cost.items() if p["relative"]]
        if len(points) > 1:
            coords = " ".join(f"{xmap(k):.1f},{svg.ymap(m):.1f}" for k, m, _, _ in points)
            svg.add(f'<polyline fill="none" stroke="{color(i)}" stroke-width="2" '
                    f'points="{coords}"/>')
        for k, m, a, b in points:
            x = xmap(k)
            if b > a:
                svg.add(f'<line x1="{x:.1f}" y1="{svg.ymap(a):.1f}" x2="{x:.1f}" '
                        f'y2="{svg.ymap(b):.1f}" stroke="{color(i)}"/>')
            svg.marker(i, x, svg.ymap(m), f"{name} at k = {k}: {m:.2f} ({a:.2f}-{b:.2f})")
    svg.legend(list(data))
    return svg.text()


def speedup_chart(data):
    """Speedup per drafter (groups), one bar per quantization: median, min-max whiskers."""
    drafters = []
    for _, bench in data.values():
        drafters += [d for d in bench if d != "plain" and d not in drafters]
    names = list(data)
    stats = {}  # (quantization index, drafter) -> (median, min, max)
    for si, (_, bench) in enumerate(data.values()):
        for d in drafters:
            s = column(bench.get(d, []), "speedup")
            if s:
                stats[(si, d)] = (statistics.median(s), min(s), max(s))
    legend = []
    for name, (_, bench) in data.items():
        rates = column(bench.get("plain", []), "tokens_per_second")
        legend.append(f"{name} (plain {statistics.median(rates):.0f} tok/s)" if rates else name)
    return bar_chart("Speedup over plain decoding (HumanEval, T = 0)", "speedup (x)", drafters,
                     legend, stats,
                     lambda d, si, m, a, b: f"{d} on {names[si]}: {m:.2f}x ({a:.2f}-{b:.2f})")


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: quantized_charts.py OUT_DIR FILE [FILE ...]")
    out, names = argv[0], argv[1:]
    data = {n: load(out, n) for n in names}
    for file_name, text in (("cost_curve.svg", cost_chart(data)),
                            ("speedup.svg", speedup_chart(data))):
        path = os.path.join(out, file_name)
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
