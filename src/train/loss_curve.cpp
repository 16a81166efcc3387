#include "train/loss_curve.h"

#include <cmath>
#include <sstream>

#include "bench/svg_chart.h"
#include "core/error.h"

namespace eagle2::train {

LossCurve parse_loss_curve(const std::string& tsv, int64_t bucket, const std::string& where) {
  if (bucket < 1) fail("loss curve: bucket ", bucket, " must be >= 1");
  std::istringstream in(tsv);
  std::string line;
  if (!std::getline(in, line) || line.rfind("step\ttokens\tloss", 0) != 0)
    fail(where, ": not a train-lm log (expected the header step, tokens, loss, lr, held_out_loss)");
  LossCurve c;
  double sum = 0;
  int64_t n = 0;
  LossCurvePoint last;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    std::istringstream row(line);
    std::string f[5];
    for (int i = 0; i < 5; ++i) std::getline(row, f[i], '\t');
    try {
      size_t used = 0;
      last.step = std::stoll(f[0], &used);
      if (used != f[0].size()) throw std::invalid_argument(f[0]);
      last.tokens = std::stoll(f[1]);
      last.loss = std::stod(f[2]);
      if (!f[4].empty()) c.held_out.push_back({last.step, last.tokens, std::stod(f[4])});
    } catch (const std::exception&) {
      fail(where, ":", line_no, ": malformed row '", line, "'");
    }
    sum += last.loss;
    if (++n == bucket) {
      c.train.push_back({last.step, last.tokens, sum / static_cast<double>(n)});
      sum = 0;
      n = 0;
    }
  }
  if (n > 0) c.train.push_back({last.step, last.tokens, sum / static_cast<double>(n)});
  return c;
}

std::string render_loss_curve(const LossCurve& curve, const std::string& title) {
  LineChart chart;
  chart.title = title;
  chart.x_label = "training tokens (millions)";
  chart.y_label = "loss (nats per token)";
  chart.value_labels = false;
  LineSeries train{"training (mean per bucket)", {}}, held{"held out", {}};
  for (const auto& p : curve.train) train.points.emplace_back(p.tokens / 1e6, p.loss);
  for (const auto& p : curve.held_out) held.points.emplace_back(p.tokens / 1e6, p.loss);
  chart.series = {train, held};
  return render_line_chart(chart);
}

}  // namespace eagle2::train
