#!/usr/bin/env python3
"""The two charts of scripts/bench_quantized.sh, as self-contained SVG (standard library only).

Usage: scripts/quantized_charts.py OUT_DIR FILE [FILE ...]

Writes OUT_DIR/cost_curve.svg (verify cost relative to k = 1 against k, log2 x axis, one line per
quantization) and OUT_DIR/speedup.svg (speedup per drafter, grouped by quantization: the median over
the runs, min-max whiskers, plain decoding's tokens/s in the legend). The look follows
src/report/svg_chart.cpp (the bench's own charts): Tableau 10 colours, marker shapes that differ per
series, grey grid, values in <title> tooltips.
"""
import math
import os
import statistics
import sys
from xml.sax.saxutils import escape

from quantized_ranges import column, load

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


def color(i):
    return PALETTE[i % len(PALETTE)]


def nice_ticks(lo, hi, target=5):
    """Round tick values covering [lo, hi] (as svg_chart.cpp's nice_ticks)."""
    if hi - lo < 1e-12:
        hi = lo + 1
    raw = (hi - lo) / target
    mag = 10 ** math.floor(math.log10(raw))
    norm = raw / mag
    step = (1 if norm <= 1 else 2 if norm <= 2 else 5 if norm <= 5 else 10) * mag
    start = math.floor(lo / step + 1e-9) * step
    n = round((math.ceil(hi / step - 1e-9) * step - start) / step)
    return [start + step * i for i in range(n + 1)]


def fmt(v, decimals):
    return f"{v:.{decimals}f}"


def tick_decimals(ticks):
    if len(ticks) < 2:
        return 0
    return min(max(-math.floor(math.log10(ticks[1] - ticks[0]) + 1e-9), 0), 6)


class Svg:
    def __init__(self, width, height, title, frame):
        self.w, self.h = width, height
        self.x0, self.x1, self.y0, self.y1 = frame
        self.parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2:.1f}" y="24" text-anchor="middle" font-size="16" '
            f'font-weight="bold">{escape(title)}</text>']

    def add(self, text):
        self.parts.append(text)

    def y_axis(self, ticks, label):
        lo, hi = ticks[0], ticks[-1]
        dec = tick_decimals(ticks)
        self.ymap = lambda v: self.y1 - (v - lo) / (hi - lo) * (self.y1 - self.y0)
        for t in ticks:
            y = self.ymap(t)
            self.add(f'<line x1="{self.x0:.1f}" y1="{y:.1f}" x2="{self.x1:.1f}" y2="{y:.1f}" '
                     f'stroke="#dddddd"/>')
            self.add(f'<text x="{self.x0 - 6:.1f}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{fmt(t, dec)}</text>')
        self.add(f'<line x1="{self.x0:.1f}" y1="{self.y0:.1f}" x2="{self.x0:.1f}" '
                 f'y2="{self.y1:.1f}" stroke="black"/>')
        cy = (self.y0 + self.y1) / 2
        self.add(f'<text x="16" y="{cy:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 16 {cy:.1f})">{escape(label)}</text>')

    def legend(self, names):
        for i, name in enumerate(names):
            y = self.y0 + 4 + 18 * i
            self.add(f'<rect x="{self.x1 + 16:.1f}" y="{y:.1f}" width="12" height="12" '
                     f'fill="{color(i)}"/>')
            self.add(f'<text x="{self.x1 + 34:.1f}" y="{y + 10:.1f}">{escape(name)}</text>')

    def marker(self, i, x, y, tip):
        c, t = color(i), f"<title>{escape(tip)}</title>"
        shape = i % 3
        if shape == 0:
            self.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{c}">{t}</circle>')
        elif shape == 1:
            self.add(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                     f'fill="{c}">{t}</rect>')
        else:
            self.add(f'<polygon points="{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},'
                     f'{y + 5:.1f} {x - 5:.1f},{y:.1f}" fill="{c}">{t}</polygon>')

    def no_data(self):
        self.add(f'<text x="{(self.x0 + self.x1) / 2:.1f}" y="{(self.y0 + self.y1) / 2:.1f}" '
                 f'text-anchor="middle" fill="#888888">no data</text>')

    def text(self):
        return "\n".join(self.parts + ["</svg>"]) + "\n"


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
    width = max(760, 150 + 64 + 24 * len(data) * max(len(drafters), 1))
    svg = Svg(width, 460, "Speedup over plain decoding (HumanEval, T = 0)",
              (64, width - 200, 44, 460 - 96))
    stats = {}  # (quantization, drafter) -> (median, min, max)
    for name, (_, bench) in data.items():
        for d in drafters:
            s = column(bench.get(d, []), "speedup")
            if s:
                stats[(name, d)] = (statistics.median(s), min(s), max(s))
    top = max([v[2] for v in stats.values()] + [1.0])
    svg.y_axis(nice_ticks(0, top), "speedup (x)")
    group = (svg.x1 - svg.x0) / max(len(drafters), 1)
    bar = group * 0.8 / max(len(data), 1)
    for ci, d in enumerate(drafters):
        gx = svg.x0 + group * ci
        for si, name in enumerate(data):
            if (name, d) not in stats:
                continue
            m, a, b = stats[(name, d)]
            x = gx + group * 0.1 + bar * si
            y = svg.ymap(m)
            svg.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" '
                    f'height="{svg.ymap(0) - y:.1f}" fill="{color(si)}"><title>'
                    f'{escape(d)} on {escape(name)}: {m:.2f}x ({a:.2f}-{b:.2f})</title></rect>')
            cx = x + bar / 2
            if b > a:
                svg.add(f'<line x1="{cx:.1f}" y1="{svg.ymap(a):.1f}" x2="{cx:.1f}" '
                        f'y2="{svg.ymap(b):.1f}" stroke="black"/>')
                for v in (a, b):
                    svg.add(f'<line x1="{cx - 3:.1f}" y1="{svg.ymap(v):.1f}" x2="{cx + 3:.1f}" '
                            f'y2="{svg.ymap(v):.1f}" stroke="black"/>')
            svg.add(f'<text x="{cx:.1f}" y="{svg.ymap(b) - 4:.1f}" text-anchor="middle" '
                    f'font-size="8">{m:.2f}</text>')
        cx, cy = gx + group / 2, svg.y1 + 16
        svg.add(f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="end" '
                f'transform="rotate(-30 {cx:.1f} {cy:.1f})">{escape(d)}</text>')
    # Plain decoding: the line every bar is read against.
    y1 = svg.ymap(1.0)
    svg.add(f'<line x1="{svg.x0:.1f}" y1="{y1:.1f}" x2="{svg.x1:.1f}" y2="{y1:.1f}" '
            f'stroke="black" stroke-dasharray="4 3"/>')
    svg.add(f'<line x1="{svg.x0:.1f}" y1="{svg.ymap(0):.1f}" x2="{svg.x1:.1f}" '
            f'y2="{svg.ymap(0):.1f}" stroke="black"/>')
    if not stats:
        svg.no_data()
    names = []
    for name, (_, bench) in data.items():
        rates = column(bench.get("plain", []), "tokens_per_second")
        names.append(f"{name} (plain {statistics.median(rates):.0f} tok/s)" if rates else name)
    svg.legend(names)
    return svg.text()


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
