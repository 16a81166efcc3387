#include "speculative/feature_capture.h"

#include <algorithm>

#include "core/error.h"

namespace eagle2 {

void add_capture_layers(std::vector<int32_t>& all, std::span<const int32_t> wanted) {
  for (int32_t l : wanted)
    if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
}

void FeatureRows::append(int64_t r, std::vector<float>& dst) const {
  if (layers.empty()) {
    const float* h = out->hidden.data() + (hidden_base + r) * d;
    dst.insert(dst.end(), h, h + d);
    return;
  }
  const auto width = static_cast<int64_t>(captured_layers.size()) * d;
  const float* row = out->captured.data() + (capture_base + r) * width;
  for (int32_t l : layers) {
    const auto k = std::find(captured_layers.begin(), captured_layers.end(), l);
    // The loops capture the union of the layers wanted; a miss is a bug of theirs, not bad input.
    if (k == captured_layers.end()) fail("internal: feature layer ", l, " was not captured");
    const float* f = row + (k - captured_layers.begin()) * d;
    dst.insert(dst.end(), f, f + d);
  }
}

}  // namespace eagle2
