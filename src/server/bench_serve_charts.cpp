// bench-serve's charts: throughput and step shapes against the number of concurrent clients,
// one line per system, each point the mean over the repetitions (the table has the ranges).
#include <numeric>

#include "eagle2/svg_chart.h"
#include "server/bench_serve.h"

namespace eagle2::server {

namespace {

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

LineChart chart_of(const BenchServeResult& r, const std::vector<int>& levels, const char* title,
                   const char* y_label, std::vector<double> BenchServeCell::*field,
                   bool eagle2_only) {
  LineChart c;
  c.title = title;
  c.x_label = "concurrent clients";
  c.y_label = y_label;
  c.x_decimals = 0;
  for (const std::string& system : r.systems) {
    if (eagle2_only && system == "llama-server") continue;
    LineSeries s;
    s.name = system;
    for (int level : levels) {
      const auto it = r.cells.find({system, level});
      if (it != r.cells.end() && !(it->second.*field).empty())
        s.points.emplace_back(level, mean(it->second.*field));
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> bench_serve_charts(
    const BenchServeResult& r, const std::vector<int>& levels) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("aggregate_tps.svg",
                   render_line_chart(chart_of(r, levels, "Aggregate throughput", "tokens/s",
                                              &BenchServeCell::aggregate_tps, false)));
  out.emplace_back("request_tps.svg",
                   render_line_chart(chart_of(r, levels, "Per-request throughput", "tokens/s",
                                              &BenchServeCell::request_tps, false)));
  LineChart rows =
      chart_of(r, levels, "Rows per engine step", "rows", &BenchServeCell::rows_per_step, true);
  rows.decimals = 1;
  out.emplace_back("rows_per_step.svg", render_line_chart(rows));
  out.emplace_back("sequences_per_step.svg",
                   render_line_chart(chart_of(r, levels, "Sequences per engine step", "sequences",
                                              &BenchServeCell::sequences_per_step, true)));
  return out;
}

}  // namespace eagle2::server
