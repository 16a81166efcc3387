#!/usr/bin/env python3
"""SVG drawing shared by the benchmark scripts' charts (scripts/quantized_charts.py,
scripts/paper_charts.py), standard library only.

The look follows src/report/svg_chart.cpp (the bench's own charts): Tableau 10 colours, marker
shapes that differ per series, grey grid, values in <title> tooltips. Kept in one module so that
every chart the scripts draw reads like the ones `eagle2 bench --svg-dir` writes.
"""
import math
from xml.sax.saxutils import escape

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


def bar_chart(title, y_label, groups, legend, stats, tip, notes=None, legend_width=200,
              vertical_labels=False):
    """Grouped bars: one group per x label, one bar per series (legend entry), each the median
    over the runs with its min-max as a whisker, and a dashed line at 1 (plain decoding's value).

    stats: (series index, group) -> (median, min, max); a missing key leaves a gap. tip(group,
    series index, median, min, max) gives the bar's tooltip. notes: group -> a short grey text
    written at the bottom of a group without bars (say, why it was not run). legend_width: the
    room right of the plot for the legend's entries. vertical_labels: the group labels written
    upwards, a line per "\n" side by side (long labels then neither leave the picture at the left
    nor overlap), the room below the plot sized for the longest line."""
    notes = notes or {}
    width = max(760, legend_width - 50 + 64 + 24 * len(legend) * max(len(groups), 1))
    room = 96
    if vertical_labels:
        room = 24 + 6 * max([len(line) for g in groups for line in g.split("\n")] + [10])
    svg = Svg(width, 364 + room, title, (64, width - legend_width, 44, 364))
    top = max([v[2] for v in stats.values()] + [1.0])
    svg.y_axis(nice_ticks(0, top), y_label)
    group = (svg.x1 - svg.x0) / max(len(groups), 1)
    bar = group * 0.8 / max(len(legend), 1)
    for ci, g in enumerate(groups):
        gx = svg.x0 + group * ci
        for si in range(len(legend)):
            if (si, g) not in stats:
                continue
            m, a, b = stats[(si, g)]
            x = gx + group * 0.1 + bar * si
            y = svg.ymap(m)
            svg.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" '
                    f'height="{svg.ymap(0) - y:.1f}" fill="{color(si)}"><title>'
                    f'{escape(tip(g, si, m, a, b))}</title></rect>')
            cx = x + bar / 2
            if b > a:
                svg.add(f'<line x1="{cx:.1f}" y1="{svg.ymap(a):.1f}" x2="{cx:.1f}" '
                        f'y2="{svg.ymap(b):.1f}" stroke="black"/>')
                for v in (a, b):
                    svg.add(f'<line x1="{cx - 3:.1f}" y1="{svg.ymap(v):.1f}" x2="{cx + 3:.1f}" '
                            f'y2="{svg.ymap(v):.1f}" stroke="black"/>')
            svg.add(f'<text x="{cx:.1f}" y="{svg.ymap(b) - 4:.1f}" text-anchor="middle" '
                    f'font-size="8">{m:.2f}</text>')
        if g in notes:
            nx, ny = gx + group / 2, svg.ymap(0) - 6
            svg.add(f'<text x="{nx:.1f}" y="{ny:.1f}" text-anchor="start" font-size="8" '
                    f'fill="#888888" transform="rotate(-90 {nx:.1f} {ny:.1f})">'
                    f'{escape(notes[g])}</text>')
        if vertical_labels:
            lines = g.split("\n")
            cx, cy = gx + group / 2 + 4 - 6 * (len(lines) - 1), svg.y1 + 8
            spans = "".join(f'<tspan x="{cx:.1f}" dy="{0 if i == 0 else 12}">{escape(line)}'
                            '</tspan>' for i, line in enumerate(lines))
            svg.add(f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="end" '
                    f'transform="rotate(-90 {cx:.1f} {cy:.1f})">{spans}</text>')
        else:
            cx, cy = gx + group / 2, svg.y1 + 16
            svg.add(f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="end" '
                    f'transform="rotate(-30 {cx:.1f} {cy:.1f})">{escape(g)}</text>')
    # Plain decoding: the line every bar is read against.
    y1 = svg.ymap(1.0)
    svg.add(f'<line x1="{svg.x0:.1f}" y1="{y1:.1f}" x2="{svg.x1:.1f}" y2="{y1:.1f}" '
            f'stroke="black" stroke-dasharray="4 3"/>')
    svg.add(f'<line x1="{svg.x0:.1f}" y1="{svg.ymap(0):.1f}" x2="{svg.x1:.1f}" '
            f'y2="{svg.ymap(0):.1f}" stroke="black"/>')
    if not stats:
        svg.no_data()
    svg.legend(legend)
    return svg.text()
