// The loss curve of a train-lm run, from its train_log.tsv: a chart for reports (models/README.md)
// and the numbers behind it.
#pragma once

#include <cstdint>
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

// Parses train_log.tsv text (header "step\ttokens\tloss\tlr\theld_out_loss"); training losses are
// averaged over consecutive buckets of `bucket` steps (the last bucket may be shorter). Error on
// a malformed row, naming its line.
LossCurve parse_loss_curve(const std::string& tsv, int64_t bucket, const std::string& where);

// SVG line chart: loss (nats per token) against millions of training tokens.
std::string render_loss_curve(const LossCurve& curve, const std::string& title);

}  // namespace eagle2::train
