// The loss curve of a train-lm run, from its train_log.tsv: a chart for reports (models/README.md)
// and the numbers behind it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eagle2::train {

struct LossCurvePoint {
  int64_t step = 0;    // last step of the bucket / the evaluation step
  int64_t tokens = 0;  // training tokens seen by then
  double loss = 0;
};

struct LossCurve {
  std::vector<LossCurvePoint> train;     // mean training loss per bucket of steps
  std::vector<LossCurvePoint> held_out;  // every evaluation
};

// One row of train_log.tsv as train-lm writes it.
struct TrainLogRow {
  int64_t step = 0;
  int64_t tokens = 0;
  double loss = 0;
  double lr = 0;
  std::optional<double> held_out_loss;  // only at evaluation steps
  std::string text;                     // the row as written, to copy it on a resume
};

// Parses train_log.tsv text (header "step\ttokens\tloss\tlr\theld_out_loss"). Every malformed
// row is an Error naming the line and the field, e.g.
//   "run/train_log.tsv:7: column 'step': 'abc' is not an integer".
std::vector<TrainLogRow> parse_train_log(const std::string& tsv, const std::string& where);

// The loss curve of a parsed log (parse_train_log's rules): training losses are averaged over
// consecutive buckets of `bucket` steps (the last bucket may be shorter).
LossCurve parse_loss_curve(const std::string& tsv, int64_t bucket, const std::string& where);

// SVG line chart: loss (nats per token) against millions of training tokens.
std::string render_loss_curve(const LossCurve& curve, const std::string& title);

}  // namespace eagle2::train
