#include "train/loss_curve.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/parse_number.h"
#include "eagle2/svg_chart.h"

namespace eagle2::train {

namespace {

const char* const kColumns[] = {"step", "tokens", "loss", "lr", "held_out_loss"};

// One field of a row, or the Error that names where it is and what is wrong with it.
template <class T>
T field(const std::string& text, int column, const std::string& where, int line_no) {
  std::string problem;
  const std::optional<T> v = parse_number<T>(text, &problem);
  if (!v) fail(where, ":", line_no, ": column '", kColumns[column], "': ", problem);
  return *v;
}

}  // namespace

std::vector<TrainLogRow> parse_train_log(const std::string& tsv, const std::string& where) {
  std::istringstream in(tsv);
  std::string line;
  if (!std::getline(in, line) || line.rfind("step\ttokens\tloss", 0) != 0)
    fail(where, ": not a train-lm log (expected the header step, tokens, loss, lr, held_out_loss)");
  std::vector<TrainLogRow> rows;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) f.push_back(cell);
    if (!line.empty() && line.back() == '\t') f.emplace_back();  // an empty held_out_loss
    if (f.size() < 4 || f.size() > 5)
      fail(where, ":", line_no,
           ": expected 5 tab-separated columns (step, tokens, loss, lr, "
           "held_out_loss), got ",
           f.size());
    TrainLogRow r;
    r.step = field<int64_t>(f[0], 0, where, line_no);
    r.tokens = field<int64_t>(f[1], 1, where, line_no);
    r.loss = field<double>(f[2], 2, where, line_no);
    r.lr = field<double>(f[3], 3, where, line_no);
    if (f.size() == 5 && !f[4].empty()) r.held_out_loss = field<double>(f[4], 4, where, line_no);
    r.text = line;
    rows.push_back(std::move(r));
  }
  return rows;
}

LossCurve parse_loss_curve(const std::string& tsv, int64_t bucket, const std::string& where) {
  if (bucket < 1) fail("loss curve: bucket ", bucket, " must be >= 1");
  LossCurve c;
  double sum = 0;
  int64_t n = 0;
  LossCurvePoint last;
  for (const TrainLogRow& r : parse_train_log(tsv, where)) {
    last = {r.step, r.tokens, r.loss};
    if (r.held_out_loss) c.held_out.push_back({r.step, r.tokens, *r.held_out_loss});
    sum += r.loss;
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
