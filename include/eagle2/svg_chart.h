// A tiny dependency-free SVG writer for reports: grouped bar charts and line charts, drawn by the
// benchmark (bench/bench_charts.h), by training (train/loss_curve.h) and by eagle2 bench-serve.
// A public header (any program may draw charts with it) implemented in src/report/, on the
// lowest layer beside core (it needs only the standard library), rather than in bench/ or core/:
// train and bench are peers and may not include each other, and core holds what inference needs,
// which a chart writer is not. Output is byte-for-byte deterministic (fixed-point numbers,
// no locale, no timestamps) so charts can be diffed and checked into reports.
//
// Contract. Units: width and height in SVG pixels; values as given. Ownership: the chart structs
// are plain values; the functions return the SVG text and keep nothing. Errors: none of their own
// (non-finite values are skipped, not thrown); std::bad_alloc passes through. Threads: pure
// functions, safe from any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace eagle2 {

struct BarSeries {
  std::string name;
  std::vector<double> values;  // one per category; missing or non-finite values draw no bar
};

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  int width = 720, height = 420;
  int decimals = 2;  // for the value labels on the bars
};

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); drawn in x order
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<LineSeries> series;
  int width = 720, height = 420;
  int decimals = 2;          // for the value labels at the markers
  bool value_labels = true;  // off for dense series (a loss curve), where labels would overlap
  int x_decimals = -1;       // of x in the markers' tooltips; -1: as the x axis ticks
};

std::string render_bar_chart(const BarChart& chart);
std::string render_line_chart(const LineChart& chart);

// Escapes & < > " ' for text and attribute values.
std::string xml_escape(const std::string& text);
// Fixed-point with the given decimals; "-0.00" becomes "0.00" so equal charts stay equal.
std::string format_number(double value, int decimals);
// Round tick values (1, 2, 5 x 10^k steps) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

}  // namespace eagle2
