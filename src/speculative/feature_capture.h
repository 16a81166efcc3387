// The features a drafter reads from the target's forwards (Drafter::feature_layers): the final-norm
// states (no layers: EAGLE-1/2 heads) or the inputs of chosen decoder layers, captured in the same
// forward (ForwardCapture: EAGLE-3 heads). The decoding loops capture the union of what their
// sequences want, for the rows of the sequences that want it, and hand each drafter its own layers
// in its own order: sequences that want no layers cost no capture at all.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/llama_model.h"

namespace eagle2 {

// Adds to `all` the layers of `wanted` it lacks (first-appearance order).
void add_capture_layers(std::vector<int32_t>& all, std::span<const int32_t> wanted);

// Width of one row of features for a drafter wanting `layers` on a target of hidden size d.
inline int64_t feature_width(std::span<const int32_t> layers, int64_t d) {
  return layers.empty() ? d : static_cast<int64_t>(layers.size()) * d;
}

// Where one sequence's rows sit in a forward's result: row r of the sequence is batch row
// hidden_base + r (out.hidden) and capture row capture_base + r (out.captured, taken with
// `captured_layers`, which hold every layer the sequence wants).
struct FeatureRows {
  const ForwardResult* out = nullptr;
  std::span<const int32_t> captured_layers;
  std::span<const int32_t> layers;  // the sequence's drafter's (empty: final-norm states)
  int64_t d = 0;
  int64_t hidden_base = 0;
  int64_t capture_base = 0;

  // Appends the features of the sequence's row r ([feature_width(layers, d)] floats) to dst.
  void append(int64_t r, std::vector<float>& dst) const;
};

}  // namespace eagle2
